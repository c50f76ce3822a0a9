"""Evaluation of a user's own question file against a workspace: questions and their gold, the run, the figures.

    questions.py  load_questions: a JSONL file of questions with gold documents, pages and/or answer strings
    gold.py       what counts as a right passage (Gold, GoldSpan, Passage)
    results.py    EvalResult: one question's outcome (plain data, one JSON line)
    runner.py     Evaluator(app).run: ask and search each question, judge the gold
    metrics.py    the figures over results, overall, by language and by split
    report.py     the figures as a readable table
    service.py    EvaluationService: what the UI's Evaluation page runs (an uploaded file, its figures and rows)
"""
