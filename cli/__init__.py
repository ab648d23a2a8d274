"""`tg-*` command-line tools, each a thin client of the gateway API."""
