package bloomfilter

// Version is the client's version: the extension release it is made with.
// The Go module is tagged clients/go/v1.1.0 accordingly.
const Version = "1.1.0"
