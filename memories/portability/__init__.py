"""Agent export and import, the pure part: the JSON Lines format and its row types (format.py),
reading and checking a file line by line (records.py), the ids inside stored JSON rewritten from
one database's to another's (remap.py), and two exports compared ids aside (compare.py). The
reads are memories.selectors.export, the write memories.services.portability."""
