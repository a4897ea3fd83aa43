import BoardwalkCodec
import BoardwalkModel
import BoardwalkStore

/// A stored event as an ``EventRow``: fields are read from the store's borrowed record view on demand, strings
/// through the scan's ``SnapshotStrings``. Valid only inside the scan callback that received it.
public struct StoreEventRow: EventRow {
    /// The borrowed view.
    public let view: EventView
    let strings: SnapshotStrings

    /// The event's arrival sequence number.
    public var seq: UInt64 { view.seq }
    /// The event's time.
    public var time: Timestamp { view.time }
    /// The event's kind.
    public var kind: EventKind { view.kind }
    /// The screen index of the event's `meta`; `nil` without one.
    public var screenIndex: Int? { view.screenIndex }
    /// The analytics event's name; `nil` for other kinds.
    public var analyticsName: String? {
        switch view.record.analyticsName {
        case .known(let name)?: name.rawValue
        case .unknown(let id)?: strings.string(id)
        case nil: nil
        }
    }

    /// The value of `field` on this event, as queries see it, read from the record view.
    public func value(_ field: EventField) -> Value {
        let r = view.record
        func text(_ id: StringID?) -> Value {
            guard let id, let s = strings.string(id) else { return .null }
            return .string(s)
        }
        func nonEmpty(_ id: StringID?) -> Value {
            if case .string(let s) = text(id), !s.isEmpty { return .string(s) }
            return .null
        }
        switch field {
        case .time: return .time(r.time)
        case .seq: return .integer(Int64(bitPattern: view.seq))
        case .kind: return .string(r.kind.rawValue)
        case .name:
            switch r.analyticsName {
            case .known(let name)?: return .string(name.rawValue)
            case .unknown(let id)?: return text(id)
            case nil: return .string(r.kind.rawValue)
            }
        case .onboarding: return text(r.onboarding)
        case .screen: return r.screenIndex.map { .integer(Int64($0)) } ?? .null
        case .screenCID: return text(r.screenClientID)
        case .totalScreens: return r.totalScreens.map { .integer(Int64($0)) } ?? .null
        case .session: return text(r.session)
        case .profile: return text(r.profile)
        case .placement: return text(r.placement)
        case .variation: return text(r.variation)
        case .eventID:
            switch r.eventID {
            case .string(let id)?: return text(id)
            case let uuid?: return uuid.uuidString.map(Value.string) ?? .null
            case nil: return .null
            }
        case .action: return text(r.actionID)
        case .element:
            if r.kind == .analytics, r.knownAnalyticsName != .screenCompleted { return .null }
            return nonEmpty(r.elementID)
        case .reply:
            guard r.knownAnalyticsName == .screenCompleted else { return .null }
            return nonEmpty(r.reply)
        case .elementType: return r.elementType.map { .string($0.rawValue) } ?? .null
        case .inputType: return r.inputType.map { .string($0.rawValue) } ?? .null
        case .errorDomain: return text(r.errorDomain)
        case .errorCode: return r.errorCode.map { .integer(Int64($0)) } ?? .null
        case .errorMessage: return text(r.errorMessage)
        case .value, .label, .option:
            guard let type = r.elementType else { return .null }
            let label = field == .label
            let option = field == .option
            func part(_ choice: ChoiceRef) -> StringID { option ? choice.id : label ? choice.label : choice.value }
            switch type {
            case .select:
                guard let choice = r.choices.first(where: { _ in true }) else { return .null }
                return text(part(choice))
            case .multiSelect:
                var items: Set<String> = []
                for choice in r.choices {
                    if let s = strings.string(part(choice)) { items.insert(s) }
                }
                // As `Value.answer`: nothing chosen is absent, a number that is not finite is absent.
                return items.isEmpty ? .null : .set(items.sorted())
            case .input:
                if label || option { return .null }
                if let n = r.number { return n.isFinite ? .number(n) : .null }
                return text(r.inputText)
            case .datePicker:
                if label || option { return .null }
                return r.date.map { Value.dateAnswer($0) } ?? .null
            }
        case .dwell: return .null
        }
    }
}
