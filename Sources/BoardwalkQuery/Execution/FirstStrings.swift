import BoardwalkCodec

/// The string fields of a session that a lean fold can keep (``FoldNeeds/leanStrings``): each is the value of the
/// session's first event, in `(time, seq)` order, that carries one (as ``SessionFold`` keeps them).
struct SessionStringFields: OptionSet {
    let rawValue: UInt8

    static let profile = SessionStringFields(rawValue: 1)
    static let placement = SessionStringFields(rawValue: 2)
    static let variation = SessionStringFields(rawValue: 4)
}

/// Beside a lean fold's ``LeanFold``s, by slot: for each string field the query reads, the position of the session's
/// first event that carries one and its string id. Kept apart from the folds, so that a query that reads none pays
/// nothing; 24 bytes per session and field.
final class FirstStrings {
    struct First {
        var at = OrderKey.highest
        var id: StringID = 0
    }

    let fields: SessionStringFields
    /// Cells per session, one per field kept.
    private let width: Int
    /// Each field's cell within a session's, −1 when it is not kept.
    private let profileCell: Int
    private let placementCell: Int
    private let variationCell: Int
    @exclusivity(unchecked) private var cells: UnsafeMutablePointer<First>
    @exclusivity(unchecked) private var capacity: Int
    /// Sessions.
    @exclusivity(unchecked) private(set) var count = 0

    /// Cells for `fields`, room for `capacity` sessions (the storage grows past it).
    init(fields: SessionStringFields, capacity: Int) {
        self.fields = fields
        var next = 0
        func cell(_ field: SessionStringFields) -> Int {
            guard fields.contains(field) else { return -1 }
            defer { next += 1 }
            return next
        }
        profileCell = cell(.profile)
        placementCell = cell(.placement)
        variationCell = cell(.variation)
        width = max(next, 1)
        self.capacity = max(capacity, 16)
        cells = .allocate(capacity: self.capacity * width)
    }

    deinit {
        cells.deallocate()  // a trivial type: nothing to deinitialize
    }

    /// Appends `n` sessions with no field seen.
    func append(count n: Int) {
        guard n > 0 else { return }
        if count + n > capacity {
            let bigger = max(capacity * 2, count + n)
            let grown = UnsafeMutablePointer<First>.allocate(capacity: bigger * width)
            grown.moveInitialize(from: cells, count: count * width)
            cells.deallocate()
            cells = grown
            capacity = bigger
        }
        (cells + count * width).initialize(repeating: First(), count: n * width)
        count += n
    }

    /// Folds the string fields of an event at `at` into the session at `slot`.
    @inline(__always)
    func add(slot: Int, _ record: RecordFields, at: OrderKey) {
        let session = cells + slot &* width
        if profileCell >= 0, let id = record.profile { note(session + profileCell, at, id) }
        if placementCell >= 0, let id = record.placement { note(session + placementCell, at, id) }
        if variationCell >= 0, let id = record.variation { note(session + variationCell, at, id) }
    }

    @inline(__always)
    private func note(_ cell: UnsafeMutablePointer<First>, _ at: OrderKey, _ id: StringID) {
        if at < cell.pointee.at { cell.pointee = First(at: at, id: id) }
    }

    /// Folds `other`'s session at `theirs` (the same fields) into the session at `slot`: each field's earlier first.
    func merge(_ other: FirstStrings, _ theirs: Int, into slot: Int) {
        precondition(other.fields == fields)
        let mine = cells + slot * width, their = other.cells + theirs * width
        for i in 0..<width where their[i].at < mine[i].at { mine[i] = their[i] }
    }

    /// Sets the summary's fields kept here, for the session at `slot`; a field no event carried stays absent.
    func fill(_ summary: SessionSummary, slot: Int, strings: SnapshotStrings) {
        let session = cells + slot * width
        func string(_ cell: Int) -> String? {
            guard cell >= 0, session[cell].at != .highest else { return nil }
            return strings.string(session[cell].id)
        }
        if profileCell >= 0 { summary.profile = string(profileCell) }
        if placementCell >= 0 { summary.placement = string(placementCell) }
        if variationCell >= 0 { summary.variation = string(variationCell) }
    }
}
