"""Build backend: setuptools, found without the network.

pip builds a package in an isolated environment and first installs the
build requirements into it from the package index.  Offline (these
machines reach Debian's archive, not PyPI) that fails even though
Debian's python3-setuptools and python3-wheel are installed.  So this
package declares no build requirements, and this backend takes setuptools
(and wheel) from the interpreter's own site-packages, which the isolated
environment hides; a requirement that setuptools asks for and that is
already importable is not asked of pip again.
"""

import importlib.util
import site
import sys

for _p in site.getsitepackages([sys.base_prefix]):
    if _p not in sys.path:
        sys.path.append(_p)

try:
    from setuptools import build_meta as _bm
except ImportError as e:                      # pragma: no cover
    raise ImportError("building bloomfilter-pg needs setuptools installed for %s "
                      "(Debian: apt-get install python3-setuptools python3-wheel)"
                      % sys.executable) from e

build_wheel = _bm.build_wheel
build_sdist = _bm.build_sdist
prepare_metadata_for_build_wheel = _bm.prepare_metadata_for_build_wheel
build_editable = _bm.build_editable
prepare_metadata_for_build_editable = _bm.prepare_metadata_for_build_editable


def _missing(reqs):
    out = []
    for r in reqs:
        name = r.split(";")[0].split("[")[0]
        for sep in "<>=!~ ":
            name = name.split(sep)[0]
        if importlib.util.find_spec(name.strip()) is None:
            out.append(r)
    return out


def get_requires_for_build_wheel(config_settings=None):
    return _missing(_bm.get_requires_for_build_wheel(config_settings))


def get_requires_for_build_sdist(config_settings=None):
    return _missing(_bm.get_requires_for_build_sdist(config_settings))


def get_requires_for_build_editable(config_settings=None):
    return _missing(_bm.get_requires_for_build_editable(config_settings))
