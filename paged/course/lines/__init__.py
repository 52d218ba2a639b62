"""What each chapter's cells print, keyed: one module per chapter (`ch00` … `ch11`).

A chapter cell prints `lines.ADMITTED.format(n=3)` rather than an English and a Korean sentence
side by side, so it reads as plain Python and shows one line where it showed two languages. Each
name is a `paged.text.Message` (English and Korean, chosen by `PAGED_LANG`), so every sentence a
learner reads lives in the catalogue, where the glossary and the particle-template checks see it.
Printed reports that belong to a part of the library (a model run, an engine run) live beside that
part instead (`paged.model.report`, `paged.engines.summary`); these modules hold what only one
chapter says. They import nothing but `paged.text`.
"""
