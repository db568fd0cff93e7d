"""Every sentence localhub says to a person in its own words (GitHub's own messages stay
beside the code that answers as GitHub does): kept in one place so they read alike and
localhub needs nothing of memrepo's to say them."""

ADMIN_LOOPBACK_ONLY = (
    "localhub's own endpoints (/_localhub/) answer only requests addressed to a loopback host "
    "(127.0.0.1, localhost or [::1]); this one was addressed to {host!r}"
)
NEEDS_OPERATOR = (
    "{login} has an account already: {what} needs localhub's operator credential "
    "(Authorization: Bearer <the operator-token file in localhub's data folder>)"
)
WHAT_TOKEN = "a new token for it"
WHAT_INSTALL = "installing an App on it"
WHAT_REPOSITORY = "a repository for it made without its token"
BOT_NO_TOKEN = "{login} is an App's account: it acts only through its installation's tokens"
PROTECTION_NEEDS_ADMIN = (
    "setting branch protection on {repo} needs admin rights on it or localhub's operator credential"
)
# Requests GitHub would accept that localhub does not model.
NO_PENDING_REVIEWS = "localhub does not support pending reviews: pass event APPROVE, REQUEST_CHANGES or COMMENT"
NO_REVIEW_COMMENTS = "localhub does not support review comments: put the text in the review body"

# A 401 to a token this localhub does not know: most often one made by another localhub (another
# data folder) that used the same port before. The data folder is named only to requests
# addressed to a loopback host, as the admin endpoints answer only those.
UNKNOWN_TOKEN = (
    "this localhub keeps its data in {data} and knows no such token: a token is known only to the "
    "localhub on the data folder that made it"
)
UNKNOWN_TOKEN_REMOTE = (
    "this localhub knows no such token: a token is known only to the localhub on the data folder that made it"
)
