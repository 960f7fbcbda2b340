"""The thesis on text, plan version 4 (issue 76): upstream (the sink forms) or layer 2's read-out, and the no-BOS
question at matched loss. ``v4_plan``: the design's numbers recomputed from the published snapshots;
``thesis_text_v4``: the runs and their decisions."""
