# unit tests of the PostgreSQL-free core
make -s unitcheck
