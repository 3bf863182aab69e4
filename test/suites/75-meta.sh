# META.json against the PGXN Meta Spec 1.0.0 and the tree
python3 test/meta_check.py
