import BoardwalkJSON

/// A minimal JSON text builder: objects, arrays, and properly escaped strings.
struct JSONObjectWriter {
    var out: String
    /// Whether the container being written still has no member (so no comma is due).
    private var first: [Bool] = []

    init(out: String) { self.out = out }

    mutating func begin() {
        out.append("{")
        first.append(true)
    }

    mutating func end() {
        out.append("}")
        first.removeLast()
    }

    mutating func beginArray() {
        out.append("[")
        first.append(true)
    }

    mutating func endArray() { end_() }

    private mutating func end_() {
        out.append("]")
        first.removeLast()
    }

    /// Starts an array element.
    mutating func element() { separator() }

    mutating func key(_ k: String) {
        separator()
        JSONString.append(k, to: &out)
        out.append(":")
    }

    private mutating func separator() {
        if first.last == true { first[first.count - 1] = false } else { out.append(",") }
    }

    mutating func string(_ s: String) { JSONString.append(s, to: &out) }
    mutating func int(_ v: Int64) { out.append(String(v)) }

    /// Finite doubles in Swift's shortest round-trip form (`25.0`, `72.5`), which is valid JSON.
    mutating func double(_ d: Double) {
        precondition(d.isFinite, "JSON has no non-finite numbers")
        out.append(d.description)
    }
}
