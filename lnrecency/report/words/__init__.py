"""The report's words (issue 75): every sentence, cell and count a reviewer reads, rendered from typed fields.

* :mod:`.findings`: one typed Finding per verdict row (its label by whose statement it is, its qualifiers), and the
  counts and table rows;
* :mod:`.plain`: the one small grammar that renders a row's qualifiers as plain words;
* :mod:`.answer`: the README's plain answer, from the findings;
* :mod:`.glossary`: every term the pages use, defined once (docs/glossary.md is generated from it);
* :mod:`.requalify`: qualifiers for rows kept from an earlier run, from the published snapshots.
"""
