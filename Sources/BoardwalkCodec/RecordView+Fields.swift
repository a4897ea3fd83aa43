import BoardwalkModel

extension RecordView {
    @inlinable @inline(__always)
    func optional(_ ref: UInt32) -> StringID? { ref == RecordFormat.absent ? nil : ref }

    /// Whether the event has `meta` (onboarding, screen, total screens).
    @inlinable
    public var hasMeta: Bool { flags & UInt8(RecordFormat.flagMeta) != 0 }
    /// The onboarding id; `nil` without `meta`.
    @inlinable
    public var onboarding: StringID? { optional(onboardingRef) }
    /// The 0-based screen index; `nil` without `meta`.
    @inlinable
    public var screenIndex: Int? { hasMeta ? Int(screen) : nil }
    /// The screen's client id; `nil` without `meta`.
    @inlinable
    public var screenClientID: StringID? { optional(screenClientRef) }
    /// How many screens the onboarding has; `nil` without `meta`.
    @inlinable
    public var totalScreens: Int? { hasMeta ? Int(truncatingIfNeeded: total) : nil }
    /// The session id, if any.
    @inlinable
    public var session: StringID? { optional(sessionRef) }
    /// The profile id, if any.
    @inlinable
    public var profile: StringID? { optional(profileRef) }
    /// The placement, if any.
    @inlinable
    public var placement: StringID? { optional(placementRef) }
    /// The variation, if any.
    @inlinable
    public var variation: StringID? { optional(variationRef) }
    /// The event id, if any: interned, or a UUID kept inline.
    @inlinable
    public var eventID: EventIDRef? {
        switch (flags >> UInt8(RecordFormat.eventIDShift)) & 3 {
        case 0: nil
        case 1: .string(eventIDRef)
        case let mode: .uuid(high: uuidHi, low: uuidLo, uppercase: mode == 3)
        }
    }

    /// The analytics name of an analytics event; `nil` for other kinds.
    @inlinable
    public var analyticsName: AnalyticsNameRef? {
        guard kind == .analytics else { return nil }
        let code = sub & 0x0F
        if code == RecordFormat.analyticsUnknown { return .unknown(r1) }
        return .known(AnalyticsName(code: code)!)
    }

    /// The known analytics name; `nil` for other kinds and for unknown names.
    @inlinable
    public var knownAnalyticsName: AnalyticsName? {
        kind == .analytics ? AnalyticsName(code: sub & 0x0F) : nil
    }

    /// The element: `screen_completed`'s `element_id` or a state update's element id.
    @inlinable
    public var elementID: StringID? {
        switch kind {
        case .analytics: optional(r2)
        case .stateUpdated: r0
        default: nil
        }
    }

    /// `screen_completed`'s reply, if any.
    @inlinable
    public var reply: StringID? { kind == .analytics ? optional(r3) : nil }

    /// The action id of an open-paywall, custom or close action.
    @inlinable
    public var actionID: StringID? {
        switch kind {
        case .openPaywall, .custom, .close: r1
        default: nil
        }
    }

    /// A state update's element type.
    @inlinable
    public var elementType: ElementType? {
        guard kind == .stateUpdated else { return nil }
        switch sub & 0x0F {
        case RecordFormat.valueSelect: return .select
        case RecordFormat.valueMultiSelect: return .multiSelect
        case RecordFormat.valueDate: return .datePicker
        default: return .input
        }
    }

    /// An input's type.
    @inlinable
    public var inputType: InputType? {
        guard kind == .stateUpdated else { return nil }
        switch sub & 0x0F {
        case RecordFormat.valueText: return .text
        case RecordFormat.valueEmail: return .email
        case RecordFormat.valueNumber: return .number
        default: return nil
        }
    }

    /// A text or email input's value.
    @inlinable
    public var inputText: StringID? {
        guard kind == .stateUpdated else { return nil }
        let t = sub & 0x0F
        return t == RecordFormat.valueText || t == RecordFormat.valueEmail ? r1 : nil
    }

    /// A number input's value.
    @inlinable
    public var number: Double? {
        kind == .stateUpdated && sub & 0x0F == RecordFormat.valueNumber ? Double(bitPattern: n0) : nil
    }

    /// A date picker's value.
    @inlinable
    public var date: DateParts? {
        guard kind == .stateUpdated, sub & 0x0F == RecordFormat.valueDate else { return nil }
        return DateParts(
            year: sub & RecordFormat.dateHasYear != 0 ? Int(truncatingIfNeeded: Int64(bitPattern: n0)) : nil,
            month: sub & RecordFormat.dateHasMonth != 0 ? Int(truncatingIfNeeded: n1) : nil,
            day: sub & RecordFormat.dateHasDay != 0 ? Int(truncatingIfNeeded: n2) : nil)
    }

    /// The options of a select (one) or multi-select (zero or more); empty for anything else.
    @inlinable
    public var choices: ChoiceRefs {
        if kind == .stateUpdated {
            switch sub & 0x0F {
            case RecordFormat.valueSelect:
                return ChoiceRefs(base: base, start: 0, count: 1, single: ChoiceRef(id: r1, value: r2, label: r3))
            case RecordFormat.valueMultiSelect:
                return ChoiceRefs(base: base, start: choicesOffset, count: choicesCount, single: nil)
            default: break
            }
        }
        return ChoiceRefs(base: base, start: 0, count: 0, single: nil)
    }

    /// An error's domain.
    @inlinable
    public var errorDomain: StringID? { kind == .error ? r1 : nil }
    /// An error's code.
    @inlinable
    public var errorCode: Int? { kind == .error ? Int(truncatingIfNeeded: Int64(bitPattern: n0)) : nil }
    /// An error's message.
    @inlinable
    public var errorMessage: StringID? { kind == .error ? r2 : nil }

    /// The record's header: what a store key carries.
    @inlinable
    public var header: RecordHeader {
        RecordHeader(time: time, onboarding: onboarding, screenIndex: hasMeta ? screen : nil)
    }
}
