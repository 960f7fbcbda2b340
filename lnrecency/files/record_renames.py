"""Where each stored record type lives now: ``module:qualname`` written by an earlier version -> its name today.

Stored evidence names every record by ``module:qualname`` (:mod:`lnrecency.files.store`). When a record moves
(the package's floors, round 3 of the architecture) or several records become one (the three ``NotRun`` classes),
its old name is added here, so that a folder written before the move still decodes, field for field, and renders
the same report. The store resolves a name through this table first; the class found must still be defined under
the new name. Generated from the moves (old tree's dataclasses -> their module today); extend it by hand when a
record moves again (round 4 moved the claim modules into ``parameter_free/`` and ``trained/`` and split
``experiments/decoders/`` into ``decoders/``, ``text/``, ``probes/`` and ``studies/``; issue 50 moved
``ProbeSettings`` into ``probes/probe_settings.py``).
"""
from __future__ import annotations

RENAMED: dict[str, str] = {
    "lnrecency.bias:BiasProfile": "lnrecency.experiments.profiler:BiasProfile",
    "lnrecency.bias:BiasRow": "lnrecency.experiments.profiler:BiasRow",
    "lnrecency.claims._views:Curve": "lnrecency.report.views.shared:Curve",
    "lnrecency.claims.amplification:CanAmplifyEvidence":
        "lnrecency.claims.parameter_free.c5_amplification:CanAmplifyEvidence",
    "lnrecency.claims.amplification:GridProfile": "lnrecency.claims.parameter_free.c5_amplification:GridProfile",
    "lnrecency.claims.amplification:GrowsEvidence": "lnrecency.claims.parameter_free.c5_amplification:GrowsEvidence",
    "lnrecency.claims.amplification:RPByAlpha": "lnrecency.claims.parameter_free.c5_amplification:RPByAlpha",
    "lnrecency.claims.amplification:RPStep": "lnrecency.claims.parameter_free.c5_amplification:RPStep",
    "lnrecency.claims.anisotropy:FigureSettingEvidence":
        "lnrecency.claims.parameter_free.c4_anisotropy:FigureSettingEvidence",
    "lnrecency.claims.anisotropy:HEvidence": "lnrecency.claims.parameter_free.c4_anisotropy:HEvidence",
    "lnrecency.claims.anisotropy:RecencyEvidence": "lnrecency.claims.parameter_free.c4_anisotropy:RecencyEvidence",
    "lnrecency.claims.baseline:EarlierEvidence": "lnrecency.claims.parameter_free.c2_no_normalisation:EarlierEvidence",
    "lnrecency.claims.baseline:FailingRow": "lnrecency.claims.parameter_free.c2_no_normalisation:FailingRow",
    "lnrecency.claims.baseline:FlatEvidence": "lnrecency.claims.parameter_free.c2_no_normalisation:FlatEvidence",
    "lnrecency.claims.c2_no_normalisation:EarlierEvidence":
        "lnrecency.claims.parameter_free.c2_no_normalisation:EarlierEvidence",
    "lnrecency.claims.c2_no_normalisation:FailingRow": "lnrecency.claims.parameter_free.c2_no_normalisation:FailingRow",
    "lnrecency.claims.c2_no_normalisation:FlatEvidence":
        "lnrecency.claims.parameter_free.c2_no_normalisation:FlatEvidence",
    "lnrecency.claims.c3_residual:KeepsEvidence": "lnrecency.claims.parameter_free.c3_residual:KeepsEvidence",
    "lnrecency.claims.c3_residual:WeakensEvidence": "lnrecency.claims.parameter_free.c3_residual:WeakensEvidence",
    "lnrecency.claims.c4_anisotropy:FigureSettingEvidence":
        "lnrecency.claims.parameter_free.c4_anisotropy:FigureSettingEvidence",
    "lnrecency.claims.c4_anisotropy:HEvidence": "lnrecency.claims.parameter_free.c4_anisotropy:HEvidence",
    "lnrecency.claims.c4_anisotropy:RecencyEvidence": "lnrecency.claims.parameter_free.c4_anisotropy:RecencyEvidence",
    "lnrecency.claims.c5_amplification:CanAmplifyEvidence":
        "lnrecency.claims.parameter_free.c5_amplification:CanAmplifyEvidence",
    "lnrecency.claims.c5_amplification:GridProfile": "lnrecency.claims.parameter_free.c5_amplification:GridProfile",
    "lnrecency.claims.c5_amplification:GrowsEvidence": "lnrecency.claims.parameter_free.c5_amplification:GrowsEvidence",
    "lnrecency.claims.c5_amplification:RPByAlpha": "lnrecency.claims.parameter_free.c5_amplification:RPByAlpha",
    "lnrecency.claims.c5_amplification:RPStep": "lnrecency.claims.parameter_free.c5_amplification:RPStep",
    "lnrecency.claims.c6_deeper_layers:DeeperEvidence":
        "lnrecency.claims.parameter_free.c6_deeper_layers:DeeperEvidence",
    "lnrecency.claims.c7_output_norm:ExactIdentity": "lnrecency.claims.parameter_free.c7_output_norm:ExactIdentity",
    "lnrecency.claims.c7_output_norm:FloorEvidence": "lnrecency.claims.parameter_free.c7_output_norm:FloorEvidence",
    "lnrecency.claims.c7_output_norm:OutputNormEvidence":
        "lnrecency.claims.parameter_free.c7_output_norm:OutputNormEvidence",
    "lnrecency.claims.c8_output_variance:DecayEvidence":
        "lnrecency.claims.parameter_free.c8_output_variance:DecayEvidence",
    "lnrecency.claims.c8_output_variance:DiagonalChecks":
        "lnrecency.claims.parameter_free.c8_output_variance:DiagonalChecks",
    "lnrecency.claims.c8_output_variance:NoNormDecay": "lnrecency.claims.parameter_free.c8_output_variance:NoNormDecay",
    "lnrecency.claims.c8_output_variance:PostNormEvidence":
        "lnrecency.claims.parameter_free.c8_output_variance:PostNormEvidence",
    "lnrecency.claims.c8_output_variance:VarianceCurve":
        "lnrecency.report.views.parameter_free.c8_output_variance:VarianceCurve",
    "lnrecency.claims.c8_output_variance:VarianceFloor":
        "lnrecency.claims.parameter_free.c8_output_variance:VarianceFloor",
    "lnrecency.claims.c9_finite_width:ConvergenceCurve":
        "lnrecency.report.views.parameter_free.c9_finite_width:ConvergenceCurve",
    "lnrecency.claims.c9_finite_width:Frequency": "lnrecency.claims.parameter_free.c9_finite_width:Frequency",
    "lnrecency.claims.c9_finite_width:RateEvidence": "lnrecency.claims.parameter_free.c9_finite_width:RateEvidence",
    "lnrecency.claims.c9_finite_width:ScaledBias": "lnrecency.claims.parameter_free.c9_finite_width:ScaledBias",
    "lnrecency.claims.c9_finite_width:SmallestWidth": "lnrecency.claims.parameter_free.c9_finite_width:SmallestWidth",
    "lnrecency.claims.c9_finite_width:WidthCheck": "lnrecency.claims.parameter_free.c9_finite_width:WidthCheck",
    "lnrecency.claims.c9_finite_width:WidthOrdering": "lnrecency.claims.parameter_free.c9_finite_width:WidthOrdering",
    "lnrecency.claims.deeper:DeeperEvidence": "lnrecency.claims.parameter_free.c6_deeper_layers:DeeperEvidence",
    "lnrecency.claims.finite_width:ConvergenceCurve":
        "lnrecency.report.views.parameter_free.c9_finite_width:ConvergenceCurve",
    "lnrecency.claims.finite_width:Frequency": "lnrecency.claims.parameter_free.c9_finite_width:Frequency",
    "lnrecency.claims.finite_width:RateEvidence": "lnrecency.claims.parameter_free.c9_finite_width:RateEvidence",
    "lnrecency.claims.finite_width:ScaledBias": "lnrecency.claims.parameter_free.c9_finite_width:ScaledBias",
    "lnrecency.claims.finite_width:SmallestWidth": "lnrecency.claims.parameter_free.c9_finite_width:SmallestWidth",
    "lnrecency.claims.finite_width:WidthCheck": "lnrecency.claims.parameter_free.c9_finite_width:WidthCheck",
    "lnrecency.claims.finite_width:WidthOrdering": "lnrecency.claims.parameter_free.c9_finite_width:WidthOrdering",
    "lnrecency.claims.output_norm:ExactIdentity": "lnrecency.claims.parameter_free.c7_output_norm:ExactIdentity",
    "lnrecency.claims.output_norm:FloorEvidence": "lnrecency.claims.parameter_free.c7_output_norm:FloorEvidence",
    "lnrecency.claims.output_norm:OutputNormEvidence":
        "lnrecency.claims.parameter_free.c7_output_norm:OutputNormEvidence",
    "lnrecency.claims.p1_p7_printed_formulas:CoefficientSign":
        "lnrecency.claims.parameter_free.p1_p7_printed_formulas:CoefficientSign",
    "lnrecency.claims.p1_p7_printed_formulas:DifferenceEvidence":
        "lnrecency.claims.parameter_free.p1_p7_printed_formulas:DifferenceEvidence",
    "lnrecency.claims.p1_p7_printed_formulas:NumeratorEvidence":
        "lnrecency.claims.parameter_free.p1_p7_printed_formulas:NumeratorEvidence",
    "lnrecency.claims.p1_p7_printed_formulas:PrintedFormula":
        "lnrecency.claims.parameter_free.p1_p7_printed_formulas:PrintedFormula",
    "lnrecency.claims.p1_p7_printed_formulas:PrintedFormulas":
        "lnrecency.claims.parameter_free.p1_p7_printed_formulas:PrintedFormulas",
    "lnrecency.claims.p1_p7_printed_formulas:PrintedNumber":
        "lnrecency.claims.parameter_free.p1_p7_printed_formulas:PrintedNumber",
    "lnrecency.claims.p1_p7_printed_formulas:ScoreFormulaEvidence":
        "lnrecency.claims.parameter_free.p1_p7_printed_formulas:ScoreFormulaEvidence",
    "lnrecency.claims.p8_p9_printed_numeric:DScalingEvidence":
        "lnrecency.claims.parameter_free.p8_p9_printed_numeric:DScalingEvidence",
    "lnrecency.claims.p8_p9_printed_numeric:GapsAtWidth":
        "lnrecency.claims.parameter_free.p8_p9_printed_numeric:GapsAtWidth",
    "lnrecency.claims.p8_p9_printed_numeric:PerLamGaps":
        "lnrecency.claims.parameter_free.p8_p9_printed_numeric:PerLamGaps",
    "lnrecency.claims.p8_p9_printed_numeric:ProfilesAtWidth":
        "lnrecency.claims.parameter_free.p8_p9_printed_numeric:ProfilesAtWidth",
    "lnrecency.claims.p8_p9_printed_numeric:Saturation":
        "lnrecency.claims.parameter_free.p8_p9_printed_numeric:Saturation",
    "lnrecency.claims.p8_p9_printed_numeric:ScoreDifference":
        "lnrecency.claims.parameter_free.p8_p9_printed_numeric:ScoreDifference",
    "lnrecency.claims.p8_p9_printed_numeric:SharpensEvidence":
        "lnrecency.claims.parameter_free.p8_p9_printed_numeric:SharpensEvidence",
    "lnrecency.claims.p8_p9_printed_numeric:WeakensEvidence":
        "lnrecency.claims.parameter_free.p8_p9_printed_numeric:WeakensEvidence",
    "lnrecency.claims.premise:NotRun": "lnrecency.inference.evidence:NotRun",
    "lnrecency.claims.premise:PremiseEvidence": "lnrecency.claims.trained.s2_0_premise:PremiseEvidence",
    "lnrecency.claims.printed:CoefficientSign":
        "lnrecency.claims.parameter_free.p1_p7_printed_formulas:CoefficientSign",
    "lnrecency.claims.printed:DifferenceEvidence":
        "lnrecency.claims.parameter_free.p1_p7_printed_formulas:DifferenceEvidence",
    "lnrecency.claims.printed:NumeratorEvidence":
        "lnrecency.claims.parameter_free.p1_p7_printed_formulas:NumeratorEvidence",
    "lnrecency.claims.printed:PrintedFormula": "lnrecency.claims.parameter_free.p1_p7_printed_formulas:PrintedFormula",
    "lnrecency.claims.printed:PrintedFormulas":
        "lnrecency.claims.parameter_free.p1_p7_printed_formulas:PrintedFormulas",
    "lnrecency.claims.printed:PrintedNumber": "lnrecency.claims.parameter_free.p1_p7_printed_formulas:PrintedNumber",
    "lnrecency.claims.printed:ScoreFormulaEvidence":
        "lnrecency.claims.parameter_free.p1_p7_printed_formulas:ScoreFormulaEvidence",
    "lnrecency.claims.printed_numeric:DScalingEvidence":
        "lnrecency.claims.parameter_free.p8_p9_printed_numeric:DScalingEvidence",
    "lnrecency.claims.printed_numeric:GapsAtWidth": "lnrecency.claims.parameter_free.p8_p9_printed_numeric:GapsAtWidth",
    "lnrecency.claims.printed_numeric:ProfilesAtWidth":
        "lnrecency.claims.parameter_free.p8_p9_printed_numeric:ProfilesAtWidth",
    "lnrecency.claims.printed_numeric:Saturation": "lnrecency.claims.parameter_free.p8_p9_printed_numeric:Saturation",
    "lnrecency.claims.printed_numeric:ScoreDifference":
        "lnrecency.claims.parameter_free.p8_p9_printed_numeric:ScoreDifference",
    "lnrecency.claims.printed_numeric:SharpensEvidence":
        "lnrecency.claims.parameter_free.p8_p9_printed_numeric:SharpensEvidence",
    "lnrecency.claims.printed_numeric:WeakensEvidence":
        "lnrecency.claims.parameter_free.p8_p9_printed_numeric:WeakensEvidence",
    "lnrecency.claims.r1_pretrained_decoders:PretrainedEvidence":
        "lnrecency.claims.trained.r1_pretrained_decoders:PretrainedEvidence",
    "lnrecency.claims.residual:KeepsEvidence": "lnrecency.claims.parameter_free.c3_residual:KeepsEvidence",
    "lnrecency.claims.residual:WeakensEvidence": "lnrecency.claims.parameter_free.c3_residual:WeakensEvidence",
    "lnrecency.claims.s2_0_premise:PremiseEvidence": "lnrecency.claims.trained.s2_0_premise:PremiseEvidence",
    "lnrecency.claims.s2_s3_evaluation:PerSeedEvidence":
        "lnrecency.claims.trained.s2_s3_seed_experiments:PerSeedEvidence",
    "lnrecency.claims.seeds_trained:NotRun": "lnrecency.inference.evidence:NotRun",
    "lnrecency.claims.seeds_trained:PerSeedEvidence":
        "lnrecency.claims.trained.s2_s3_seed_experiments:PerSeedEvidence",
    "lnrecency.claims.t1_theorem1:T1Evidence": "lnrecency.claims.parameter_free.t1_theorem1:T1Evidence",
    "lnrecency.claims.theorem1:T1Evidence": "lnrecency.claims.parameter_free.t1_theorem1:T1Evidence",
    "lnrecency.claims.trained:NotRun": "lnrecency.inference.evidence:NotRun",
    "lnrecency.claims.tt1_tt4_thesis_text:TextThesisEvidence":
        "lnrecency.claims.trained.tt1_tt4_thesis_text:TextThesisEvidence",
    "lnrecency.claims.variance:DecayEvidence": "lnrecency.claims.parameter_free.c8_output_variance:DecayEvidence",
    "lnrecency.claims.variance:DiagonalChecks": "lnrecency.claims.parameter_free.c8_output_variance:DiagonalChecks",
    "lnrecency.claims.variance:NoNormDecay": "lnrecency.claims.parameter_free.c8_output_variance:NoNormDecay",
    "lnrecency.claims.variance:PostNormEvidence": "lnrecency.claims.parameter_free.c8_output_variance:PostNormEvidence",
    "lnrecency.claims.variance:VarianceCurve": "lnrecency.report.views.parameter_free.c8_output_variance:VarianceCurve",
    "lnrecency.claims.variance:VarianceFloor": "lnrecency.claims.parameter_free.c8_output_variance:VarianceFloor",
    "lnrecency.config:ModelConfig": "lnrecency.model.config:ModelConfig",
    "lnrecency.conventions:Convention": "lnrecency.model.authors_presets:Convention",
    "lnrecency.evidence:BoundarySearch": "lnrecency.inference.records:BoundarySearch",
    "lnrecency.evidence:EntryCheck": "lnrecency.inference.records:EntryCheck",
    "lnrecency.evidence:GapComparison": "lnrecency.inference.records:GapComparison",
    "lnrecency.evidence:LimitProfile": "lnrecency.inference.records:LimitProfile",
    "lnrecency.evidence:MCMeans": "lnrecency.inference.records:MCMeans",
    "lnrecency.evidence:MeanChecks": "lnrecency.inference.records:MeanChecks",
    "lnrecency.evidence:OrderingTest": "lnrecency.inference.records:OrderingTest",
    "lnrecency.evidence:OrderingTests": "lnrecency.inference.records:OrderingTests",
    "lnrecency.evidence:PairedMean": "lnrecency.inference.records:PairedMean",
    "lnrecency.evidence:PerSetting": "lnrecency.inference.evidence:PerSetting",
    "lnrecency.evidence:ProofRecord": "lnrecency.inference.records:ProofRecord",
    "lnrecency.evidence:RegionRecord": "lnrecency.inference.records:RegionRecord",
    "lnrecency.evidence:RemainderConstant": "lnrecency.inference.records:RemainderConstant",
    "lnrecency.evidence:Setting": "lnrecency.inference.evidence:Setting",
    "lnrecency.evidence:SettingGroup": "lnrecency.inference.evidence:SettingGroup",
    "lnrecency.evidence:WidthChecks": "lnrecency.inference.records:WidthChecks",
    "lnrecency.experiments.decoders.corpus:Corpus": "lnrecency.experiments.text.corpus:Corpus",
    "lnrecency.experiments.decoders.gguf:GGUFModel": "lnrecency.experiments.probes.declared_sizes:GGUFModel",
    "lnrecency.experiments.probes.gguf:GGUFModel": "lnrecency.experiments.probes.declared_sizes:GGUFModel",
    "lnrecency.experiments.decoders.gguf_probe:Loaded": "lnrecency.experiments.probes.gguf_probe:Loaded",
    "lnrecency.experiments.decoders.pretrained:PretrainedSettings":
        "lnrecency.experiments.studies.pretrained:PretrainedSettings",
    "lnrecency.experiments.decoders.probe:HeadProbe": "lnrecency.experiments.probes.tidy:HeadProbe",
    "lnrecency.experiments.decoders.probe:LayerProbe": "lnrecency.experiments.probes.tidy:LayerProbe",
    "lnrecency.experiments.decoders.probe:ProbeResult": "lnrecency.experiments.probes.probe:ProbeResult",
    "lnrecency.experiments.decoders.probe:ProbeSettings":
        "lnrecency.experiments.probes.probe_settings:ProbeSettings",
    "lnrecency.experiments.probes.probe:ProbeSettings": "lnrecency.experiments.probes.probe_settings:ProbeSettings",
    "lnrecency.experiments.probes.probe:HeadProbe": "lnrecency.experiments.probes.tidy:HeadProbe",
    "lnrecency.experiments.probes.probe:LayerProbe": "lnrecency.experiments.probes.tidy:LayerProbe",
    "lnrecency.experiments.decoders.seeds_config:Seed002Settings":
        "lnrecency.experiments.studies.seeds_config:Seed002Settings",
    "lnrecency.experiments.decoders.seeds_config:Seed003Settings":
        "lnrecency.experiments.studies.seeds_config:Seed003Settings",
    "lnrecency.experiments.decoders.thesis_config:ThesisResults":
        "lnrecency.experiments.studies.thesis_config:ThesisResults",
    "lnrecency.experiments.decoders.thesis_config:ThesisSettings":
        "lnrecency.experiments.studies.thesis_config:ThesisSettings",
    "lnrecency.experiments.decoders.thesis_text:TextThesisSettings":
        "lnrecency.experiments.studies.thesis_text:TextThesisSettings",
    "lnrecency.figure:ReportFigure": "lnrecency.files.figure_record:ReportFigure",
    "lnrecency.layers:Normalisation": "lnrecency.model.layers:Normalisation",
    "lnrecency.layers:Update": "lnrecency.model.layers:Update",
    "lnrecency.models.config:DecoderConfig": "lnrecency.experiments.decoders.decoder_config:DecoderConfig",
    "lnrecency.models.config:TrainSettings": "lnrecency.experiments.decoders.decoder_config:TrainSettings",
    "lnrecency.models.corpus:Corpus": "lnrecency.experiments.text.corpus:Corpus",
    "lnrecency.models.decoder:LayerTrace": "lnrecency.experiments.decoders.decoder:LayerTrace",
    "lnrecency.models.probe:HeadProbe": "lnrecency.experiments.probes.tidy:HeadProbe",
    "lnrecency.models.probe:LayerProbe": "lnrecency.experiments.probes.tidy:LayerProbe",
    "lnrecency.models.probe:ProbeResult": "lnrecency.experiments.probes.probe:ProbeResult",
    "lnrecency.models.probe:ProbeSettings": "lnrecency.experiments.probes.probe_settings:ProbeSettings",
    "lnrecency.models.seeds_config:Seed002Settings": "lnrecency.experiments.studies.seeds_config:Seed002Settings",
    "lnrecency.models.seeds_config:Seed003Settings": "lnrecency.experiments.studies.seeds_config:Seed003Settings",
    "lnrecency.models.thesis_config:ThesisResults": "lnrecency.experiments.studies.thesis_config:ThesisResults",
    "lnrecency.models.thesis_config:ThesisSettings": "lnrecency.experiments.studies.thesis_config:ThesisSettings",
    "lnrecency.models.train:TrainResult": "lnrecency.experiments.decoders.train:TrainResult",
    "lnrecency.reproduce:Ceiling": "lnrecency.experiments.authors.ceiling:Ceiling",
    "lnrecency.reproduce:CurveFigure": "lnrecency.experiments.authors.catalogue:CurveFigure",
    "lnrecency.reproduce:HeatmapFigure": "lnrecency.experiments.authors.catalogue:HeatmapFigure",
    "lnrecency.reproduce:Panel": "lnrecency.experiments.authors.panels:Panel",
    "lnrecency.reproduce:Row": "lnrecency.experiments.authors.catalogue:Row",
    "lnrecency.reproduce:Run": "lnrecency.experiments.authors.panels:Run",
    "lnrecency.stats:Budget": "lnrecency.inference.budget:Budget",
    "lnrecency.stats:Estimate": "lnrecency.inference.estimates:Estimate",
    "lnrecency.stats:MeanCheck": "lnrecency.inference.checks:MeanCheck",
    "lnrecency.stats:OrderingCheck": "lnrecency.inference.checks:OrderingCheck",
    "lnrecency.stats:Proportion": "lnrecency.inference.estimates:Proportion",
    "lnrecency.stats:SeedDecision": "lnrecency.inference.seed_tests:SeedDecision",
    "lnrecency.stats:SeedTest": "lnrecency.inference.seed_tests:SeedTest",
    "lnrecency.sweep:PhaseRow": "lnrecency.experiments.sweep:PhaseRow",
    "lnrecency.sweep:SweepGrid": "lnrecency.experiments.sweep:SweepGrid",
    "lnrecency.tables:Table": "lnrecency.files.table_record:Table",
    "lnrecency.verdicts:ClaimResult": "lnrecency.inference.verdicts:ClaimResult",
    # issue 66: the views moved out of the claims (lnrecency.report.views), the evaluation helpers into their claims
    "lnrecency.report.views.shared:Curve": "lnrecency.report.views.shared:Curve",
    "lnrecency.claims.declare:FigureOutput": "lnrecency.report.views.outputs:FigureOutput",
    "lnrecency.claims.declare:TableOutput": "lnrecency.report.views.outputs:TableOutput",
    "lnrecency.claims.parameter_free.c9_finite_width:ConvergenceCurve":
        "lnrecency.report.views.parameter_free.c9_finite_width:ConvergenceCurve",
    "lnrecency.claims.parameter_free.c8_output_variance:VarianceCurve":
        "lnrecency.report.views.parameter_free.c8_output_variance:VarianceCurve",
    "lnrecency.claims.trained.s2_s3_seed_experiments:PerSeedEvidence":
        "lnrecency.claims.trained.s2_s3_seed_experiments:PerSeedEvidence",
}
