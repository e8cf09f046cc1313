from dun.entry import run

run()
