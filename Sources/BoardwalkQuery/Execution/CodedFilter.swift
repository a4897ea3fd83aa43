import BoardwalkModel

/// Filters on lean records: with `fields` (``CodedCountPlan/codedFields(of:)``, every field the filters read has a
/// code), the result is kept per combination of those fields' codes, so that each record costs a lookup, not an
/// evaluation through `Value`s.
struct CodedFilter {
    let filters: [Bound]
    let fields: [EventField]?
    let now: Timestamp
    /// Whether the filters pass, per combination of the codes of the fields they read.
    var memo = CodeTable<Bool>()
    /// The most combinations of filter codes the memo keeps (about 42 bytes each).
    static let memoLimit = 1 << 16

    init(_ filters: [Bound], fields: [EventField]?, now: Timestamp) {
        self.filters = filters
        self.fields = fields
        self.now = now
    }

    @inline(__always)
    mutating func passes(_ row: StoreFieldsRow) -> Bool {
        if filters.isEmpty { return true }
        guard let fields else { return evaluate(row) }
        let key = CodeKey(fields, row.fields)
        if let e = memo.find(key) { return memo.values[e] }
        let result = evaluate(row)
        // Bounded: filters on fields of many values (`session`, `profile`) would otherwise keep an entry per
        // distinct value; past the bound the filters are evaluated per record, as without a memo.
        if memo.keys.count < Self.memoLimit { memo.insert(key, result) }
        return result
    }

    /// The filters on one record.
    private func evaluate(_ row: StoreFieldsRow) -> Bool {
        func leaf(_ b: Bound) -> Value {
            if case .event(let field) = b { return row.value(field) }
            return .null
        }
        for filter in filters where !filter.evaluate(now: now, leaf).isTrue { return false }
        return true
    }
}
