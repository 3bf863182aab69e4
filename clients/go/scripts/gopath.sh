# Sourced by the Go client's test suite, benchmark and example: builds
# code that imports the client together with Debian's lib/pq and pgx v4
# (golang-github-lib-pq-dev, golang-github-jackc-pgx-v4-dev under
# /usr/share/gocode) without the Go module proxy, in GOPATH mode.
#
#   . clients/go/scripts/gopath.sh     (from the repository root)
#   bf_go_build DIR OUTPUT             builds the package in DIR (a path in
#                                      the repository) into OUTPUT
#
# The client is copied into a private GOPATH (removed at exit) under its
# module path; DIR is copied next to it.
bf_gopath="$(mktemp -d)"
trap 'rm -rf "$bf_gopath"' EXIT
bf_go_module=github.com/bloomfilter-pg/bloomfilter
mkdir -p "$bf_gopath/src/$bf_go_module/clients" "$bf_gopath/src/$bf_go_module/examples" \
	"$bf_gopath/src/$bf_go_module/bench/clients"
cp -r clients/go "$bf_gopath/src/$bf_go_module/clients/go"

bf_go() {
	GO111MODULE=off GOPATH="$bf_gopath:/usr/share/gocode" GOFLAGS= GOPROXY=off go "$@"
}

# bf_go_build DIR OUTPUT [go test -c]: vet and build DIR's package (a
# test binary when the third argument is "test")
bf_go_build() {
	local dir="$1" out="$2" mode="${3:-}"
	case "$dir" in clients/go/*) ;; *)
		mkdir -p "$bf_gopath/src/$bf_go_module/$dir"
		cp -r "$dir"/. "$bf_gopath/src/$bf_go_module/$dir/" ;;
	esac
	(cd "$bf_gopath/src/$bf_go_module/$dir" && bf_go vet . &&
		if [ "$mode" = test ]; then bf_go test -c -o "$out" .; else bf_go build -o "$out" .; fi)
}
