# every ```sql block of README.md runs as written in a new database
pg_virtualenv bash test/readme_check.sh README.md
