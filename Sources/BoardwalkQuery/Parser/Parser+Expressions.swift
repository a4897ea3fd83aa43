extension Parser {
    /// `expr := or`; precedence from loosest: `or`, `and`, `not`, comparison and `in`, `+ -`, `* /`, unary `-`.
    mutating func expression() throws(QueryError) -> Expr {
        try orExpression()
    }

    private mutating func orExpression() throws(QueryError) -> Expr {
        var left = try andExpression()
        while acceptKeyword("or") != nil {
            let right = try andExpression()
            left = Expr(.binary(.or, left, right), left.range.lowerBound..<right.range.upperBound)
        }
        return left
    }

    private mutating func andExpression() throws(QueryError) -> Expr {
        var left = try notExpression()
        while acceptKeyword("and") != nil {
            let right = try notExpression()
            left = Expr(.binary(.and, left, right), left.range.lowerBound..<right.range.upperBound)
        }
        return left
    }

    private mutating func notExpression() throws(QueryError) -> Expr {
        if let not = acceptKeyword("not") {
            try nest()
            defer { depth -= 1 }
            let operand = try notExpression()
            return Expr(.not(operand), not.range.lowerBound..<operand.range.upperBound)
        }
        return try comparison()
    }

    private mutating func comparison() throws(QueryError) -> Expr {
        let left = try additive()
        let op: BinaryOperator? =
            switch current.kind {
            case .equal: .equal
            case .notEqual: .notEqual
            case .less: .less
            case .lessEqual: .lessEqual
            case .greater: .greater
            case .greaterEqual: .greaterEqual
            default: nil
            }
        if let op {
            _ = advance()
            let right = try additive()
            let expr = Expr(.binary(op, left, right), left.range.lowerBound..<right.range.upperBound)
            if [.equal, .notEqual, .less, .lessEqual, .greater, .greaterEqual].contains(current.kind) {
                throw error("comparisons do not chain", at: current.range, label: "use `and` to combine comparisons")
            }
            return expr
        }
        if let isKeyword = acceptKeyword("is") {
            return try presence(of: left, after: isKeyword)
        }
        var negated = false
        if current.isKeyword("not"), peek().isKeyword("in") {
            _ = advance()
            negated = true
        }
        if acceptKeyword("in") != nil {
            if current.kind == .leftParen {
                // `in (1, 2)`, as SQL writes it: parse the items to show them in brackets.
                let open = advance()
                let (parsed, close) = try listItems(closedBy: .rightParen, "`)`")
                // `in (["a", "b"])`: a list in parentheses is still a list.
                if parsed.count == 1, case .list(let items) = parsed[0].kind {
                    return Expr(
                        .membership(left, items, negated: negated), left.range.lowerBound..<close.range.upperBound)
                }
                let items = sourceText(open.range.upperBound..<close.range.lowerBound)
                throw error(
                    "a list after `in` is written in square brackets",
                    at: open.range.lowerBound..<close.range.upperBound,
                    label: "write `[\(items)]`")
            }
            let list = try primary()
            guard case .list(let items) = list.kind else {
                throw QueryError(
                    .syntax, "expected a list such as `[\"a\", \"b\"]` after `in`", at: list.range, in: text)
            }
            return Expr(.membership(left, items, negated: negated), left.range.lowerBound..<list.range.upperBound)
        }
        return left
    }

    /// `x is absent`, `x is present`; SQL's `is null` and `is not null` get the spelling to use.
    private mutating func presence(of value: Expr, after isKeyword: Token) throws(QueryError) -> Expr {
        let word = current
        if let present = ["absent": false, "present": true][word.kind == .identifier ? word.text : ""] {
            _ = advance()
            return Expr(.presence(value, present: present), value.range.lowerBound..<word.range.upperBound)
        }
        if word.isKeyword("null") || (word.isKeyword("not") && peek().isKeyword("null")) {
            let negated = word.isKeyword("not")
            let end = negated ? peek().range.upperBound : word.range.upperBound
            throw error(
                "write `is \(negated ? "present" : "absent")`, not `is \(negated ? "not " : "")null`",
                at: isKeyword.range.lowerBound..<end, label: "Boardwalk says absent for a value that is not there")
        }
        throw error(
            "expected `absent` or `present` after `is`", at: word.range,
            label: "e.g. `reply is absent`, `variation is present`")
    }

    /// The comma-separated expressions after an opening bracket or parenthesis (none when `close` follows at once),
    /// and the closing token, spelled `what` in the error when it is missing.
    private mutating func listItems(closedBy close: Token.Kind, _ what: String) throws(QueryError) -> ([Expr], Token) {
        try nest()
        defer { depth -= 1 }
        var items: [Expr] = []
        if current.kind != close {
            repeat { items.append(try expression()) } while accept(.comma) != nil
        }
        return (items, try expect(close, what, after: "the list"))
    }

    private mutating func additive() throws(QueryError) -> Expr {
        var left = try multiplicative()
        while current.kind == .plus || current.kind == .minus {
            let op: BinaryOperator = advance().kind == .plus ? .add : .subtract
            let right = try multiplicative()
            left = Expr(.binary(op, left, right), left.range.lowerBound..<right.range.upperBound)
        }
        return left
    }

    private mutating func multiplicative() throws(QueryError) -> Expr {
        var left = try unary()
        while current.kind == .star || current.kind == .slash {
            let op: BinaryOperator = advance().kind == .star ? .multiply : .divide
            let right = try unary()
            left = Expr(.binary(op, left, right), left.range.lowerBound..<right.range.upperBound)
        }
        return left
    }

    private mutating func unary() throws(QueryError) -> Expr {
        if let minus = accept(.minus) {
            try nest()
            defer { depth -= 1 }
            let operand = try unary()
            return Expr(.negate(operand), minus.range.lowerBound..<operand.range.upperBound)
        }
        return try primary()
    }

    /// SQL's `count(*)` (or `f(*)`), just after the call's `(`: there is no `*` argument; `count()` counts rows.
    func rejectStarArgument(of name: Token) throws(QueryError) {
        guard current.kind == .star, peek().kind == .rightParen else { return }
        let label =
            name.text == "count"
            ? "`count()` counts rows; write `count()`" : "`\(name.text)` takes a field or an expression"
        throw error("`\(name.text)(*)`: there is no `*` argument", at: current.range, label: label)
    }

    /// Literals, names, calls, parenthesized expressions and lists.
    mutating func primary() throws(QueryError) -> Expr {
        if let literal = try literal() { return literal }
        let token = current
        switch token.kind {
        case .identifier:
            if ["and", "or", "in", "by", "as"].contains(token.text) {
                throw unexpected(expected: "an expression", hint: missingExpressionHint())
            }
            _ = advance()
            if accept(.leftParen) != nil {
                try nest()
                defer { depth -= 1 }
                var arguments: [Expr] = []
                try rejectStarArgument(of: token)
                if current.kind != .rightParen {
                    repeat { arguments.append(try expression()) } while accept(.comma) != nil
                }
                _ = try expect(.rightParen, "`)`", after: "the arguments of `\(token.text)`")
                return Expr(
                    .call(token.text, nameRange: token.range, arguments: arguments),
                    token.range.lowerBound..<previous.range.upperBound)
            }
            return Expr(.name(token.text), token.range)
        case .leftParen:
            _ = advance()
            try nest()
            defer { depth -= 1 }
            var inner = try expression()
            let close = try expect(.rightParen, "`)`", hint: closing(token))
            inner.range = token.range.lowerBound..<close.range.upperBound
            return inner
        case .leftBracket:
            _ = advance()
            let (items, close) = try listItems(closedBy: .rightBracket, "`]`")
            return Expr(.list(items), token.range.lowerBound..<close.range.upperBound)
        default:
            throw unexpected(expected: "an expression", hint: missingExpressionHint())
        }
    }
}
