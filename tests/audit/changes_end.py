"""changes_end.py LOG - the end of a change record and what turn_start said
of it, as two lines the audit and nonroot suites compare (docs/audit.md, "The
change record"): "end COMPLETE UNREADABLE>0 UNREADABLE_PATHS more N" from the
changes line (past 4 paths, their count: "32 paths"), and "protections: B", whether turn_start's protections.changes
says that a command can make the record incomplete."""
import json
import sys

lines = [json.loads(line) for line in open(sys.argv[1], encoding="utf-8")]
e = [line for line in lines if line["event"] == "changes"][0]
paths = e.get("unreadable_paths")
print("end", e["complete"], e["unreadable"] > 0,
      paths if paths is None or len(paths) <= 4 else "%d paths" % len(paths),
      "more", e.get("unreadable_paths_more"))
print("protections:", "a command can make the change record incomplete" in
      lines[0]["protections"].get("changes", ""))
