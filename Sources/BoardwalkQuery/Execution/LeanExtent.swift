import BoardwalkCodec

/// Whether a lean scan folds outcomes (``FoldNeeds/leanOutcomes``), as a type: a scan loop generic over it is
/// specialized for each, with the record's extent a constant. One loop with the extent a variable stored the fields
/// of both extents to memory for every event: callgrind, a screen funnel, 9 % more instructions on one onboarding
/// and 10 % on the whole store.
protocol LeanExtent {
    static var outcomes: Bool { get }
    static var extent: RecordFields.Extent { get }
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

/// No outcomes, but every leading field read: a count taken beside the fold (``CodedCountBesideFold``) reads them.
enum WithEveryField: LeanExtent {
    static var outcomes: Bool { false }
    static var extent: RecordFields.Extent { .all }
}
