"""The conversion server: a warm process that forks a fresh worker per command (issue 13).

A small model's conversion is a few milliseconds of work behind about 0.1 s of start-up:
the interpreter, numpy, click and tosaconv's own modules. Build scripts that call
tosaconv once per model and binding pay that start-up every time. With
``TOSACONV_SERVER=1`` in the environment, the ``tosaconv`` command instead hands its
command line to a server that has imported everything once:

- :mod:`.wire` is what client and server share: where the socket lives, which
  commands may be served, the frames they exchange. It imports nothing heavy.
- :mod:`.client` is the command's side. It imports no numpy and no click, so it
  costs a few milliseconds over the bare interpreter. When no server runs, it starts
  one in the background and the command runs in-process as usual.
- :mod:`.server` accepts a command and forks a worker for it, then reports how the
  worker ended.
- :mod:`.worker` makes the forked child look like the command's own process. It
  takes the command's working directory, umask, environment, resource limits and
  stdin/stdout/stderr (the descriptors themselves, passed over the socket). Then it
  runs the command line exactly as ``python -m tosaconv`` would.

Every command runs in a fresh fork of the server. It therefore starts from the
server's clean post-import state: nothing one conversion does is seen by the next.
The server serves only the commands that never run the numpy interpreter. When the
installed tosaconv changes under it, or a command's environment differs in what
imports read (``PYTHON*``, ``OPENBLAS_*``, locale...), the command runs in-process
instead. The server runs only for its own user: the socket is in a 0700 directory,
and the server checks the peer's uid.
"""
