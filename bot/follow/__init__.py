"""`memrepo follow`: the companion of a harness that writes its memory folder itself (Letta
Code, or any agent that edits the folder through a shell and commits with git). It pushes the
harness's commits, brings in what was merged on the forge, and never touches a working tree
that is not at rest.

    decide.py  what to do next, as functions of plain state (table-tested)
    run.py     the loop that reads the folder and does it, through sync
    marker.py  whether a follower runs (`repository status`), and what waits for review
    guard.py   the pre-push hook: a push of main adds only what the policy lets land
    texts.py   what it says
"""
