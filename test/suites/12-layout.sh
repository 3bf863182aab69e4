# the shape of src/ against its map, src/README.md (test/check_layout.py):
# the directions between folders and the layers of value/, from the built
# objects' symbols and the #include lines; no cycle between files; headers
# declare their own file's or folder's functions; C calls C, never this
# library's SQL-callable functions; the map names every file
python3 test/check_layout.py
