"""HTTP gateway: the REST API that `tg-*` commands and other programs use to reach the bus."""
