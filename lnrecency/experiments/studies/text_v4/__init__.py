"""The thesis on text, plan version 4 (issue 76): upstream (the sink forms) or layer 2's read-out, and the no-BOS
question at matched loss. ``v4_plan``: the design's numbers recomputed from the published snapshots; the runs are
the engine's (:mod:`lnrecency.experiments.plans.text_arms`, from the plan's declared arms in
:mod:`lnrecency.experiments.plans.declared`), its snapshot the hook
``lnrecency.experiments.plans.hooks:v4_snapshot``."""
