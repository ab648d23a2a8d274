"""One stack per data folder: a second `tg-launch` (or `tg-demo`) on a folder a running `tg-launch`
holds is refused in one line naming the holder's PID, before it starts anything; once the holder is
killed, even with SIGKILL, the folder is free again."""

from __future__ import annotations


from support.procs import free_port, launched, spawn, stop, tg, wait_until


def test_a_second_launch_on_a_held_data_folder_is_refused_until_the_holder_dies(tmp_path):
    data = tmp_path / "data"
    port = free_port()
    first = spawn("tg-launch", "--data-dir", str(data), "--gateway-port", str(port))
    try:
        url = f"http://127.0.0.1:{port}/"
        wait_until(lambda: tg("tg-show-flows", "-u", url).returncode == 0, timeout=90, what="the first tg-launch")
        for command in ("tg-launch", "tg-demo"):
            second = tg(command, "--data-dir", str(data), "--gateway-port", str(free_port()), timeout=120)
            assert second.returncode == 1, second.stderr
            assert second.stderr == (
                f"{command}: error: the data folder {data.resolve()} is in use by process {first.pid} "
                "(another tg-launch or tg-demo); stop it or pass another --data-dir\n")
            assert "Traceback" not in second.stdout + second.stderr
        first.kill()  # no chance to unlock: the kernel drops the lock with the process
        first.wait(15)
    finally:
        stop(first)
    with launched(data) as url:
        assert tg("tg-show-flows", "-u", url).returncode == 0
