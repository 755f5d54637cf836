# Toolgate service image.
#
# The image always gets TOOLGATE_DATABASE_URL (see docker-compose.yml), so the embedded
# Postgres extra (pgserver) is not installed. Layout: /srv holds app/, migrations/ and
# alembic.ini side by side, and the package is installed *editable* from /srv, so
# app/db/migrate.py (ROOT = Path(__file__).resolve().parents[2]) resolves ROOT to /srv and
# finds alembic.ini and migrations/ there.
#
# BASE_IMAGE: any Debian-like image with Python 3.11+ (`python3` with its venv module),
# `sh`, and `groupadd`/`useradd`. The default is the public python image;
# `make image-check` builds on a Debian bookworm base it makes itself (scripts/image-check),
# where there is no `python`, only `python3`: the virtualenv below gives both the same
# `python` and `pip`.
ARG BASE_IMAGE=python:3.11-slim
FROM ${BASE_IMAGE}

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    VIRTUAL_ENV=/opt/toolgate \
    PATH=/opt/toolgate/bin:$PATH

# The unprivileged user first: it never changes, so this layer stays cached.
RUN groupadd --system --gid 10001 toolgate \
 && useradd --system --uid 10001 --gid toolgate --home-dir /srv --shell /usr/sbin/nologin toolgate \
 && python3 -m venv /opt/toolgate

WORKDIR /srv

# Set only for a build behind a TLS-intercepting proxy: the CA bundle pip trusts (mounted
# into the build, e.g. `podman build -v /etc/ssl/certs:/etc/ssl/certs:ro`). Unset: pip's own.
ARG PIP_CERT

# Dependencies first (their own layer, rebuilt only when pyproject.toml changes): the
# [project] dependencies as pyproject pins them, nothing else.
COPY pyproject.toml ./
RUN python -c "import tomllib; deps = tomllib.load(open('pyproject.toml', 'rb'))['project']['dependencies']; open('/tmp/requirements.txt', 'w').write('\n'.join(deps) + '\n')" \
 && pip install -r /tmp/requirements.txt \
 && rm /tmp/requirements.txt

# The code, then the package itself (editable: imports resolve to /srv/app). The code
# stays owned by root and read-only for the service's user.
COPY alembic.ini ./
COPY migrations/ ./migrations/
COPY app/ ./app/
RUN pip install --no-deps -e . \
 && python -c "from app.db.migrate import ROOT, head_revision; assert str(ROOT) == '/srv', ROOT; assert head_revision(), 'no migrations found'" \
 && python -m compileall -q app migrations

USER toolgate

# TOOLGATE_PORT: the port to serve on (default 8000; a container on the host's network
# picks a free one). TOOLGATE_WORKERS: server processes (one per core the container may use).
ENV TOOLGATE_PORT=8000 \
    TOOLGATE_WORKERS=1
EXPOSE 8000

# Liveness only (/healthz touches no database); slim has no curl, so Python asks.
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
  CMD ["python", "-c", "import os, sys, urllib.request; sys.exit(0 if urllib.request.urlopen('http://127.0.0.1:%s/healthz' % os.environ.get('TOOLGATE_PORT', '8000'), timeout=2).status == 200 else 1)"]

# Migrations to head, then the service (with its background driver). `exec` replaces the
# shell, so the server is PID 1 and `docker stop` (SIGTERM) reaches it: it shuts down
# gracefully, hands its run leases back and exits 0.
CMD ["sh", "-c", "python -m app db upgrade && exec python -m app serve --host 0.0.0.0 --port \"${TOOLGATE_PORT:-8000}\" --workers \"${TOOLGATE_WORKERS:-1}\""]
