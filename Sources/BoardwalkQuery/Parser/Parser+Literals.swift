import BoardwalkModel

extension Parser {
    /// A literal token, or nil when the current token is not one. `true`/`false` are literals.
    mutating func literal() throws(QueryError) -> Expr? {
        let token = current
        let value: Literal
        switch token.kind {
        case .string: value = .string(token.text)
        case .integer: value = .integer(token.integer)
        case .decimal: value = .decimal(token.decimal)
        case .duration: value = .duration(token.microseconds)
        case .timestamp: value = .time(Timestamp(microseconds: token.microseconds))
        case .identifier where token.text == "true": value = .bool(true)
        case .identifier where token.text == "false": value = .bool(false)
        default: return nil
        }
        _ = advance()
        return Expr(.literal(value), token.range)
    }
}
