"""Grove's tests, in folders that mirror the code (tests/recall/ for memory/recall/, tests/desk/
for review/ ...). A package, so test modules are named by their folder (tests.recall.test_rank)
and two folders may each hold a file of one name. Shared helpers live in tests/_helpers/ and
fixtures in tests/conftest.py; no test module imports another (tests/project/test_layout.py)."""
