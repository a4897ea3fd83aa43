import BoardwalkCodec

/// Whether a lean scan folds outcomes (``FoldNeeds/leanOutcomes``), as a type: a scan loop generic over it is
/// specialized for each, with the record's extent a constant. One loop with the extent a variable stored the fields
/// of both extents to memory for every event: callgrind, a screen funnel, 9 % more instructions on one onboarding
/// and 10 % on the whole store.
protocol LeanExtent {
    static var outcomes: Bool { get }
}

extension LeanExtent {
    static var extent: RecordFields.Extent { outcomes ? .all : .session }
}

enum WithOutcomes: LeanExtent {
    static var outcomes: Bool { true }
}

enum WithoutOutcomes: LeanExtent {
    static var outcomes: Bool { false }
}
