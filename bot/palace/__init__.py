"""The palace: one memory in a browser, read-only. Core memory as the agent sees it with every
line linked to why it is there, the external tree, sizes against the limits, pending pull
requests and set-aside edits, the log by writer, and memory at any date with a diff against now.

    model.py   pure view-models (plain data in, plain data out), tested by tables
    source.py  the shell: the clone, the forge and the transcripts, read once per commit of main
    gate.py    who may look: loopback, or a token (bearer header, or ?token= once then a cookie);
               under `memrepo serve`, the viewer's forge token (bot/serve/palace.py decides)
    web.py     the Flask blueprint (thin views, templates/palace/) and create_app for `memrepo palace`
    server.py  running it: a threaded WSGI server on one address

Another server mounts the same pages with `web.blueprint(resolve, authorize=...)`, as `memrepo
serve` does for every memory it serves (bot/serve/palace.py, at /palace/OWNER/REPO/).
"""
