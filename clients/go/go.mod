module github.com/bloomfilter-pg/bloomfilter/clients/go

go 1.19
