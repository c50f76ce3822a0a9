"""Jobs run by workers under a lease (leases, the engine that runs one, the queue's typed entries), whatever the
job does: documents/ ingests, patients/ imports records."""
