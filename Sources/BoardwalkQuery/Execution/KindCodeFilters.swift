import BoardwalkCodec
import BoardwalkModel
import BoardwalkStore

/// Filters evaluated on what a record's kind code and its block's group give (`kind`, `name`, `onboarding`, `screen`),
/// once per code rather than once per event: on each record's first bytes (``CodedCountScan``), and on the kind counts
/// of each block's header, to step over the blocks that hold no event that can pass (``KindSelection``).
enum KindCodeFilters {
    /// The fields a kind code and a group give.
    static func reads(_ field: EventField) -> Bool {
        field == .kind || field == .name || field == .onboarding || field == .screen
    }

    /// Whether the events of kind code `code` (an analytics name outside the known ones: `name`, else
    /// `RecordFormat.absent`) in the group (`onboarding`, `screen`) pass every one of `filters`, which read only the
    /// fields ``reads(_:)`` allows (any other reads as absent).
    static func passes(
        _ filters: [Bound], now: Timestamp, strings: SnapshotStrings, code: UInt8, name: StringID,
        onboarding group: StringID, screen groupScreen: UInt16
    ) -> Bool {
        let onboarding: Value =
            group == RecordFormat.noOnboarding ? .null : strings.string(group).map(Value.string) ?? .null
        let screen: Value = group == RecordFormat.noOnboarding ? .null : .integer(Int64(groupScreen))
        func leaf(_ b: Bound) -> Value {
            switch b {
            case .event(.onboarding): return onboarding
            case .event(.screen): return screen
            case .event(let field) where field == .kind || field == .name:
                if field == .name, name != RecordFormat.absent {
                    return FieldCode.value(.name, UInt64(name), strings: strings)
                }
                return FieldCode.code(field, kindCode: code).map { FieldCode.value(field, $0, strings: strings) }
                    ?? .null
            default: return .null
            }
        }
        return filters.allSatisfy { $0.evaluate(now: now, leaf).isTrue }
    }

    /// The conjuncts of `filters` (the leading `where` stages, their `and`s taken apart) that read only the fields a
    /// kind code and a group give: every event that passes `filters` passes them.
    static func conjuncts(of filters: [Bound]) -> [Bound] {
        var kept: [Bound] = []
        func take(_ b: Bound) {
            if case .and(let l, let r) = b {
                take(l)
                take(r)
            } else if b.readsOnly(reads) {
                kept.append(b)
            }
        }
        filters.forEach(take)
        return kept
    }

    /// A selection of the blocks that can hold an event passing `filters`, from the conjuncts that read only kind codes
    /// and groups; `nil` when there are none (every block can). One per thread (``KindSelection``).
    static func selection(_ filters: [Bound], now: Timestamp, strings: SnapshotStrings) -> KindSelection? {
        let conjuncts = conjuncts(of: filters)
        guard !conjuncts.isEmpty else { return nil }
        let readsGroup = !conjuncts.allSatisfy { $0.readsOnly { $0 == .kind || $0 == .name } }
        return KindSelection(readsGroup: readsGroup) { onboarding, screen, code, name in
            passes(
                conjuncts, now: now, strings: strings, code: code, name: name ?? RecordFormat.absent,
                onboarding: onboarding, screen: screen)
        }
    }
}
