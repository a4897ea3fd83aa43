/// A quiz answer or input: the whole current state of one element (`onStateUpdatedAction`).
///
/// Repeated updates of one element in a session are last-write-wins.
public struct StateUpdate: Hashable, Sendable {
    /// The element the user answered, as set in the builder.
    public var elementID: String
    /// The element's value.
    public var value: StateValue

    /// The state of element `elementID`.
    @inlinable
    public init(elementID: String, value: StateValue) {
        self.elementID = elementID
        self.value = value
    }
}

/// The value of a state update, one case per element type.
public enum StateValue: Hashable, Sendable {
    /// One option of a list.
    case select(Choice)
    /// A snapshot of the whole selection (not a delta); may be empty.
    case multiSelect([Choice])
    /// A text, email or number field.
    case input(InputValue)
    /// A date; each part is optional on its own.
    case datePicker(DateParts)

    /// The element type, as on the wire.
    @inlinable
    public var elementType: ElementType {
        switch self {
        case .select: .select
        case .multiSelect: .multiSelect
        case .input: .input
        case .datePicker: .datePicker
        }
    }
}

/// Element types, spelled as on the wire (`element_type`).
public enum ElementType: String, CaseIterable, Hashable, Sendable {
    case select = "select"
    case multiSelect = "multi_select"
    case input = "input"
    case datePicker = "date_picker"
}

/// An option of a select or multi-select element.
public struct Choice: Hashable, Sendable {
    /// The option's id.
    public var id: String
    /// The option's value (what analytics group by).
    public var value: String
    /// The text the user saw.
    public var label: String

    /// An option from its id, value and label.
    @inlinable
    public init(id: String, value: String, label: String) {
        self.id = id
        self.value = value
        self.label = label
    }
}

/// The value of an input field.
public enum InputValue: Hashable, Sendable {
    case text(String)
    case email(String)
    /// Numbers arrive as doubles, even `25`.
    case number(Double)

    /// The input type, as on the wire.
    @inlinable
    public var inputType: InputType {
        switch self {
        case .text: .text
        case .email: .email
        case .number: .number
        }
    }
}

/// Input types, spelled as on the wire.
public enum InputType: String, CaseIterable, Hashable, Sendable {
    case text, email, number
}

/// The value of a date picker. Each part is optional on its own (`{year: 1995}` is valid);
/// `month` is 1-based.
public struct DateParts: Hashable, Sendable {
    /// The year, if picked.
    public var year: Int?
    /// The month, 1-based, if picked.
    public var month: Int?
    /// The day of the month, if picked.
    public var day: Int?

    /// A date from the parts the user picked.
    @inlinable
    public init(year: Int? = nil, month: Int? = nil, day: Int? = nil) {
        self.year = year
        self.month = month
        self.day = day
    }
}
