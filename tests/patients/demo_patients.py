"""The demo patients and guideline pages the cross-level and LINKS_TO tests share."""

# A demo patient coded with atrial fibrillation (ICD-9 42731) and prescribed warfarin; and the demo's smallest
# patient, who has neither.
AF_PATIENT = "10025463"
OTHER_PATIENT = "10019917"
# 2024 AHA/ACC HCM guideline, section 8.4 "Management of Patients With HCM and AF" (anticoagulation).
HCM_AF_PAGES = ("ommen-2024-hcm.pdf", 47, 48)
# Guideline pages that state a target for a lab the demo measures: warfarin to an INR of 2.0 to 3.0 for women with
# atrial fibrillation (2011 women's CVD prevention guideline, p. 11), and INR 目标范围 2.0~3.0 (2024 Chinese acute AF
# guideline, p. 10).
WOMEN_INR_PAGES = ("mosca-2011-women-cvd.pdf", 11, 11)
ZH_INR_PAGES = ("zh-acute-af-ed-2024.pdf", 10, 10)
# Demo patients with atrial fibrillation and INR results: a woman of 63 whose latest INR is 2.0 (2118-11-21), and a
# man of 57 whose latest is 1.4 (2149-10-24); read from the demo's patients, diagnoses_icd and labevents.
AF_WOMAN = "10019172"
AF_MAN = "10005866"
