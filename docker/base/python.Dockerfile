# Stand-in for python:3.11-slim: Debian 12's Python 3.11 as `python`, with venv and the headers.
ARG BASE
FROM ${BASE}
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      python3 python3-venv python3-dev ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && ln -s /usr/bin/python3 /usr/local/bin/python
COPY ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
ENV LANG=C.UTF-8
CMD ["python3"]
