"""WSGI application factories for .ci/openstack.sh, served by gunicorn as `wsgi_apps:NAME()`.

Keystone and Nova hand `sys.argv` to oslo.config, which would read gunicorn's own arguments
as theirs: each factory hides them before the service's module is imported. Configuration
comes from the services' usual environment variables (OS_KEYSTONE_CONFIG_DIR and the like).
"""

import sys


def _own_argv():
    sys.argv = sys.argv[:1]


def keystone():
    _own_argv()
    from keystone.server import wsgi
    return wsgi.initialize_public_application()


def placement():
    _own_argv()
    from placement.wsgi import api
    return api.application


def nova():
    _own_argv()
    from nova.wsgi import osapi_compute
    return osapi_compute.application


def blazar():
    _own_argv()
    from blazar.wsgi import api
    return api.application
