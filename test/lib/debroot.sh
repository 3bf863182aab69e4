# Minimal Debian roots for the suites that need another PostgreSQL version
# or a machine with nothing installed (sourced by test/matrix.sh,
# test/fresh_machine.sh and test/package_check.sh; run as root).
#
# Roots are made with `debootstrap --variant=minbase` and cached under
# $BF_CACHE_DIR (default /var/cache/bloomfilter-test), which later runs reuse;
# downloaded packages are kept there too.  Delete the directory to start
# from scratch.  Two kinds of cached root per Debian suite:
#
#   base   as debootstrap left it (a fresh machine)
#   deps   base plus what test/install-deps.sh installs
#
# A test never changes a cached root: debroot_enter mounts a throwaway
# overlay over it (upper layer on a tmpfs), with /proc, /dev/pts, /dev/shm
# and the package cache mounted inside, and debroot_leave (also run on
# every exit path) stops what still runs there and unmounts it all.

BF_CACHE_DIR="${BF_CACHE_DIR:-/var/cache/bloomfilter-test}"

# The roots with test dependencies (kind deps), one line each: the root's
# name, its Debian suite, the PostgreSQL major its tests use, the archive
# suite its postgresql-<V> packages come from ("-": the Debian suite's own)
# and other majors installed beside it (for pg_upgrade and pg_dump across
# majors; "-": none).  A name that is a plain Debian suite (bookworm,
# trixie...) and is not listed here is that suite with its default
# PostgreSQL.  19 is at its release candidate in Debian's experimental
# suite: when it reaches sid, its line's fourth field becomes "-".
BF_ROOTS="${BF_ROOTS:-
trixie	trixie	17	-	-
sid	sid	18	-	-
sid-19	sid	19	experimental	18
}"
BF_MIRROR="${BF_MIRROR:-http://deb.debian.org/debian}"
DEBROOT=""			# the root entered last
_debroot_mounts=()		# mount points to undo, in order of mounting
_debroot_tmp=()

_debroot_say() { echo "debroot: [$(date +%T)] $*"; }

# field $2 (1: name ... 5: other majors) of root $1's line of BF_ROOTS; for
# a name not listed, the name itself as Debian suite and "-" otherwise
debroot_field() {
	local name="$1" n="$2" line
	line="$(awk -v n="$name" '$1 == n' <<<"$BF_ROOTS" | head -1)"
	if [ -z "$line" ]; then
		case "$n" in 1 | 2) echo "$name" ;; *) echo - ;; esac
		return
	fi
	awk -v n="$n" '{ print $n }' <<<"$line"
}

# the PostgreSQL packages of root $1 that come from another archive suite:
# apt takes them from there (a pin for these names only: pinning the whole
# suite pulls newer versions of unrelated packages, e.g. an incompatible
# perl), and from the Debian suite itself once that has them
_debroot_pg_sources() {
	local dir="$1" name="$2" v from
	v="$(debroot_field "$name" 3)"
	from="$(debroot_field "$name" 4)"
	[ "$from" != - ] || return 0
	echo "deb $BF_MIRROR $from main" >"$dir/etc/apt/sources.list.d/bf-$from.list"
	printf 'Package: %s\nPin: release a=%s\nPin-Priority: 990\n' \
		"postgresql-$v postgresql-client-$v postgresql-server-dev-$v libpq-dev libpq5" "$from" \
		>"$dir/etc/apt/preferences.d/bf-postgresql-$v"
}

# stops the processes still running inside root $1 (a cluster left by a
# failed test), by pid
_debroot_kill_inside() {
	local r="$1" p
	for p in /proc/[0-9]*; do
		[ "$(readlink "$p/root" 2>/dev/null)" = "$r" ] && kill -9 "${p#/proc/}" 2>/dev/null
	done
	return 0
}

debroot_leave() {
	local i m
	for m in "${_debroot_mounts[@]}"; do
		case "$m" in */root) _debroot_kill_inside "$m" ;; esac
	done
	for ((i = ${#_debroot_mounts[@]} - 1; i >= 0; i--)); do
		m="${_debroot_mounts[$i]}"
		umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true
	done
	_debroot_mounts=()
	for m in "${_debroot_tmp[@]}"; do rm -rf "$m"; done
	_debroot_tmp=()
	DEBROOT=""
}

_debroot_mount() {
	local target="${*: -1}"
	mount "$@" && _debroot_mounts+=("$target")
}

# the filesystems a root needs to run apt and PostgreSQL, and the shared
# package cache; $1: root, $2: Debian suite, $3: a directory for a private
# layer over the cache, or empty.  apt locks the cache it writes to, so a
# root that runs apt while another one does (the package check beside the
# fresh-machine check) reads the shared cache through an overlay and
# writes only to its own layer.
_debroot_mount_inside() {
	local r="$1" suite="$2" private="$3"
	mkdir -p "$BF_CACHE_DIR/apt/$suite/partial"
	_debroot_mount -t proc proc "$r/proc" &&
		_debroot_mount --bind /dev/pts "$r/dev/pts" &&
		_debroot_mount -t tmpfs -o mode=1777 shm "$r/dev/shm" || return 1
	if [ -z "$private" ]; then
		_debroot_mount --bind "$BF_CACHE_DIR/apt/$suite" "$r/var/cache/apt/archives"
	else
		mkdir -p "$private/upper" "$private/work"
		_debroot_mount -t overlay overlay \
			-o "lowerdir=$BF_CACHE_DIR/apt/$suite,upperdir=$private/upper,workdir=$private/work" \
			"$r/var/cache/apt/archives"
	fi
}

# runs the bash command $2 as root inside root $1, with a clean environment
# (LANG unset, as on a new machine) plus the variables named after it
debroot_run_in() {
	local r="$1" cmd="$2"
	shift 2
	chroot "$r" /usr/bin/env -i HOME=/root TERM=dumb \
		PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		"$@" /bin/bash -c "$cmd"
}

# as debroot_run_in, in a network namespace of its own with only a loopback
# interface: the clusters made there cannot meet those of a test running
# beside it on this machine (pg_createcluster picks a port that is free at
# that moment); no network, so run apt before
debroot_run_isolated() {
	local r="$1" cmd="$2"
	shift 2
	unshare --net /bin/bash -c 'ip link set lo up && exec "$@"' bf-netns \
		chroot "$r" /usr/bin/env -i HOME=/root TERM=dumb \
		PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		"$@" /bin/bash -c "$cmd"
}

# makes (once) the cached root of kind $2 (base or deps) named $1 (a Debian
# suite, or for deps a name of BF_ROOTS) and prints its path; $3 (deps
# only): the source tree whose test/install-deps.sh is run there, for the
# root's PostgreSQL and then for each other major it lists
debroot_prepare() {
	local name="$1" kind="$2" src="${3:-}"
	local suite dir="$BF_CACHE_DIR/$1/$kind" v others
	suite="$(debroot_field "$name" 2)"
	v="$(debroot_field "$name" 3)"
	others="$(debroot_field "$name" 5)"
	mkdir -p "$BF_CACHE_DIR/$name"
	(
		flock 9
		[ -e "$dir/.bf-ready" ] && exit 0
		rm -rf "$dir.new"
		if [ "$kind" = base ]; then
			_debroot_say "debootstrap --variant=minbase $suite (cached in $dir)" >&2
			mkdir -p "$BF_CACHE_DIR/apt/$suite"
			debootstrap --variant=minbase --cache-dir="$BF_CACHE_DIR/apt/$suite" \
				"$suite" "$dir.new" "$BF_MIRROR" >"$BF_CACHE_DIR/$suite/debootstrap.log" 2>&1 ||
				{ tail -20 "$BF_CACHE_DIR/$suite/debootstrap.log" >&2; exit 1; }
			# no service starts when a package is installed (no default cluster)
			printf '#!/bin/sh\nexit 101\n' >"$dir.new/usr/sbin/policy-rc.d"
			chmod 755 "$dir.new/usr/sbin/policy-rc.d"
			# a throwaway root needs no fsync after each unpacked file
			echo force-unsafe-io >"$dir.new/etc/dpkg/dpkg.cfg.d/bf-test-unsafe-io"
			# sid's Release file may be past its Valid-Until
			echo 'Acquire::Check-Valid-Until "false";' >"$dir.new/etc/apt/apt.conf.d/99bf-test"
			touch "$dir.new/.bf-ready"
		else
			base="$(debroot_prepare "$suite" base)" || exit 1
			_debroot_say "installing test/install-deps.sh's packages into a copy of $suite for $name (cached in $dir)" >&2
			cp -a "$base" "$dir.new"
			rm -f "$dir.new/.bf-ready"
			trap debroot_leave EXIT
			_debroot_mount_inside "$dir.new" "$suite" "" || exit 1
			cp /etc/resolv.conf "$dir.new/etc/resolv.conf" 2>/dev/null
			_debroot_pg_sources "$dir.new" "$name"
			cp "$src/test/install-deps.sh" "$dir.new/tmp/install-deps.sh"
			for pv in $([ "$v" = - ] || echo "$v") $([ "$others" = - ] || echo "${others//,/ }"); do
				debroot_run_in "$dir.new" "bash /tmp/install-deps.sh" BF_NESTED=1 BF_DEPS_MATRIX=1 \
					BF_PG_VERSION="$pv" >&2 ||
					{ _debroot_say "test/install-deps.sh (PostgreSQL $pv) failed in $name" >&2; exit 1; }
			done
			[ "$v" != - ] || debroot_run_in "$dir.new" "bash /tmp/install-deps.sh" BF_NESTED=1 BF_DEPS_MATRIX=1 >&2 ||
				{ _debroot_say "test/install-deps.sh failed in $name" >&2; exit 1; }
			debroot_leave
			rm -f "$dir.new/tmp/install-deps.sh"
			touch "$dir.new/.bf-ready"
		fi
		mv "$dir.new" "$dir"
	) 9>"$BF_CACHE_DIR/$name/.lock-$kind" || return 1
	echo "$dir"
}

# mounts a throwaway overlay over cached root $1 (from debroot_prepare)
# named $2 (see debroot_prepare), copies the source tree $3 (if given) to /src in it and
# sets DEBROOT; $4 = private: apt there writes to a layer of its own over
# the package cache (see _debroot_mount_inside)
debroot_enter() {
	local lower="$1" suite src="$3" cache="${4:-shared}" t
	suite="$(debroot_field "$2" 2)"
	t="$(mktemp -d /tmp/bf-root.XXXXXX)"
	_debroot_tmp+=("$t")
	mkdir -p "$t/rw" "$t/root"
	_debroot_mount -t tmpfs -o size=8G tmpfs "$t/rw" || return 1
	mkdir -p "$t/rw/upper" "$t/rw/work"
	_debroot_mount -t overlay overlay \
		-o "lowerdir=$lower,upperdir=$t/rw/upper,workdir=$t/rw/work" "$t/root" || return 1
	DEBROOT="$t/root"
	_debroot_mount_inside "$DEBROOT" "$suite" "$([ "$cache" = private ] && echo "$t/rw/apt")" || return 1
	cp /etc/resolv.conf "$DEBROOT/etc/resolv.conf" 2>/dev/null
	[ -z "$src" ] || debroot_copy_source "$src" "$DEBROOT/src"
}

# copies source tree $1 to $2 as a clone would have it plus the working
# tree's changes: git history (the upgrade test reads the released 1.0
# from it) and every file not ignored, without build products
debroot_copy_source() {
	local src="$1" dst="$2"
	mkdir -p "$dst"
	if git -C "$src" rev-parse --git-dir >/dev/null 2>&1; then
		git clone -q --no-local "$src" "$dst" &&
			(cd "$src" && git ls-files -z -co --exclude-standard |
				tar --null --ignore-failed-read -T - -cf - 2>/dev/null) |
			tar -C "$dst" -xf -
	else
		tar -C "$src" --exclude='*.o' --exclude='*.so' -cf - . | tar -C "$dst" -xf -
	fi
}
