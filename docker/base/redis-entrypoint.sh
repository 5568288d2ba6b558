#!/bin/sh
# As the official image: a redis-server without a --protected-mode of its own accepts other
# containers (it binds every interface and has no password), and runs as user redis.
set -eu
if [ "$1" = redis-server ]; then
    case " $* " in *" --protected-mode "*) ;; *) set -- "$@" --protected-mode no ;; esac
    chown -R redis:redis /data
    exec runuser -u redis -- "$@"
fi
exec "$@"
