import Boardwalk

extension Value {
    var stringValue: String? {
        switch self {
        case .string(let s): s
        case .integer(let i): String(i)
        case .bool(let b): b ? "true" : "false"
        case .set(let items): items.joined(separator: ", ")
        default: nil
        }
    }

    var doubleValue: Double? {
        switch self {
        case .integer(let i): Double(i)
        case .number(let d): d
        case .duration(let d): d
        default: nil
        }
    }

    var intValue: Int? {
        switch self {
        case .integer(let i): Int(i)
        case .number(let d) where d.isFinite: Int(d)
        default: nil
        }
    }
}
