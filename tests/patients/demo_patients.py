"""The demo patients and guideline pages the cross-level and LINKS_TO tests share."""

# A demo patient coded with atrial fibrillation (ICD-9 42731) and prescribed warfarin; and the demo's smallest
# patient, who has neither.
AF_PATIENT = "10025463"
OTHER_PATIENT = "10019917"
# 2024 AHA/ACC HCM guideline, section 8.4 "Management of Patients With HCM and AF" (anticoagulation).
HCM_AF_PAGES = ("ommen-2024-hcm.pdf", 47, 48)
