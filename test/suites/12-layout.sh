# the shape of src/ (test/check_layout.py): no cycle between files, read
# from the built objects' symbols; C calls C, never this library's
# SQL-callable functions; README's layout table and the headers name every
# file
python3 test/check_layout.py
