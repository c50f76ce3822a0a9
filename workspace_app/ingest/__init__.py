"""Ingestion: readers by media type, layout, sections, chunking, and the pipeline that runs the stages."""
