# every ```sql block of README.md and docs/*.md runs as written in a new
# database; the links between README.md, CONTRIBUTING.md, CHANGELOG.md and
# docs/ resolve (files and anchors)
python3 test/doc_links.py || exit 1
pg_virtualenv bash test/readme_check.sh README.md docs/*.md
