{% macro qrepl_row_filter_sql(tree, article, prefix) %}
    {#- Spark SQL of a stored row filter over the columns `<prefix>.<column>` (docs/spec.md
        §11). Rendered from the tree, never from a user's text, as
        python/qrepl/core/filter_meaning.py (spark_sql) renders it, and each part checked again
        as python/qrepl/core/filter_language.py checks it: a column of the article of an exact
        type, an operator or function of the language, a literal of its type whose text is
        what it says (a string reaches the SQL as its UTF-8 bytes in hex, a number has at most
        38 digits, a date is a day of the calendar), one type on both sides of a comparison, and
        at most 38 digits to compare numbers exactly. Anything else stops the run with one
        line: a partition_spec edited in the table is never run as SQL. -#}
    {%- set types = {} -%}
    {%- for name, type in article['columns'] -%}{%- do types.update({name: type}) -%}{%- endfor -%}
    {%- set rendered = _qrepl_filter_node(tree, article, types, prefix) -%}
    {%- if rendered[1] != 'boolean' -%}
        {{ _qrepl_filter_refused(article, 'the filter is not a condition') }}
    {%- endif -%}
    {{ return(rendered[0]) }}
{% endmacro %}

{% macro _qrepl_filter_refused(article, why) %}
    {{ exceptions.raise_compiler_error("qrepl: a row filter on " ~ article.name ~ " is refused: " ~ why) }}
{% endmacro %}

{% macro _qrepl_filter_node(node, article, types, prefix) %}
    {#- (SQL, type, integer digits, fraction digits) of one checked node: type number, string,
        boolean or date; the digits a number may have (0, 0 for the other types), as
        filter_language._check counts them. -#}
    {%- if node is not mapping -%}
        {{ _qrepl_filter_refused(article, 'not a filter tree') }}
    {%- endif -%}
    {%- if 'col' in node -%}
        {%- set col = node['col'] -%}
        {%- if col is not string or col not in types -%}
            {{ _qrepl_filter_refused(article, 'a column it names is not a column of the article') }}
        {%- endif -%}
        {%- set type = types[col] -%}
        {%- set integer_digits = {'tinyint': 3, 'smallint': 5, 'int': 10, 'bigint': 20} -%}
        {%- set decimal = modules.re.fullmatch('decimal\\(\\s*([0-9]+)\\s*,\\s*([0-9]+)\\s*\\)', type) -%}
        {%- if type in integer_digits -%}
            {{ return((prefix ~ '.`' ~ col ~ '`', 'number', integer_digits[type], 0)) }}
        {%- elif decimal -%}
            {{ return((prefix ~ '.`' ~ col ~ '`', 'number', (decimal.group(1) | int) - (decimal.group(2) | int), decimal.group(2) | int)) }}
        {%- elif type in ('string', 'boolean', 'date') -%}
            {{ return((prefix ~ '.`' ~ col ~ '`', type, 0, 0)) }}
        {%- endif -%}
        {{ _qrepl_filter_refused(article, 'column ' ~ col ~ ' is a ' ~ type ~ ', not an exact type') }}
    {%- elif 'lit' in node -%}
        {%- set t = node.get('type') -%}
        {%- set v = node['lit'] -%}
        {%- if t == 'string' and v is string -%}
            {{ return(("cast(X'" ~ (v.encode('utf-8').hex() | upper) ~ "' as string)" if v else "''", 'string', 0, 0)) }}
        {%- elif t == 'boolean' and v in ('true', 'false') -%}
            {{ return((v, 'boolean', 0, 0)) }}
        {%- elif t == 'date' and v is string and modules.re.fullmatch('(?!0000)[0-9]{4}-[0-9]{2}-[0-9]{2}', v) -%}
            {%- set y, m, d = v[0:4] | int, v[5:7] | int, v[8:10] | int -%}
            {%- set leap = (y % 4 == 0 and y % 100 != 0) or y % 400 == 0 -%}
            {%- set days = [31, 29 if leap else 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31] -%}
            {%- if 1 <= m and m <= 12 and 1 <= d and d <= days[m - 1] -%}
                {{ return(("DATE '" ~ v ~ "'", 'date', 0, 0)) }}
            {%- endif -%}
        {%- elif t == 'number' and v is string and modules.re.fullmatch('-?[0-9]+(\\.[0-9]+)?', v) -%}
            {%- set parts = v.lstrip('-').split('.') -%}
            {%- set whole = (parts[0].lstrip('0') or '0') | length -%}
            {%- set frac = parts[1] | length if parts | length == 2 else 0 -%}
            {%- if whole + frac > 38 -%}
                {{ _qrepl_filter_refused(article, 'a number has more than 38 digits') }}
            {%- endif -%}
            {%- if '.' in v -%}
                {{ return((v ~ 'BD', 'number', whole, frac)) }}
            {%- endif -%}
            {%- set n = v | int -%}
            {%- if -2147483648 <= n and n <= 2147483647 -%}
                {{ return((n | string, 'number', whole, 0)) }}
            {%- elif -9223372036854775808 <= n and n <= 9223372036854775807 -%}
                {{ return((n | string ~ 'L', 'number', whole, 0)) }}
            {%- endif -%}
            {{ return((v ~ 'BD', 'number', whole, 0)) }}
        {%- endif -%}
        {{ _qrepl_filter_refused(article, 'a literal is not of the type it says') }}
    {%- elif 'fn' in node -%}
        {%- set args = [] -%}
        {%- for arg in node.get('args') or [] -%}{%- do args.append(_qrepl_filter_node(arg, article, types, prefix)) -%}{%- endfor -%}
        {%- set sqls = [] -%}{%- set kinds = [] -%}
        {%- for arg in args -%}{%- do sqls.append(arg[0]) -%}{%- if arg[1] not in kinds -%}{%- do kinds.append(arg[1]) -%}{%- endif -%}{%- endfor -%}
        {%- if node['fn'] == 'coalesce' and kinds | length == 1 -%}
            {%- set widest = _qrepl_filter_widest(args, article, 'coalesce') -%}
            {{ return(('coalesce(' ~ sqls | join(', ') ~ ')', kinds[0], widest[0], widest[1])) }}
        {%- elif node['fn'] in ('lower', 'upper', 'trim', 'length') and args | length == 1 and kinds == ['string'] -%}
            {{ return((node['fn'] ~ '(' ~ sqls[0] ~ ')', 'number' if node['fn'] == 'length' else 'string', 10 if node['fn'] == 'length' else 0, 0)) }}
        {%- endif -%}
        {{ _qrepl_filter_refused(article, 'a function is not one a filter may use, or its arguments are not of its types') }}
    {%- endif -%}
    {%- set op = node.get('op') -%}
    {%- set args = [] -%}
    {%- for arg in node.get('args') or [] -%}{%- do args.append(_qrepl_filter_node(arg, article, types, prefix)) -%}{%- endfor -%}
    {%- set sqls = [] -%}{%- set kinds = [] -%}
    {%- for arg in args -%}{%- do sqls.append(arg[0]) -%}{%- if arg[1] not in kinds -%}{%- do kinds.append(arg[1]) -%}{%- endif -%}{%- endfor -%}
    {%- if op in ('and', 'or') and args | length >= 1 and kinds == ['boolean'] -%}
        {{ return(('(' ~ sqls | join(' ' ~ op ~ ' ') ~ ')', 'boolean', 0, 0)) }}
    {%- elif op == 'not' and args | length == 1 and kinds == ['boolean'] -%}
        {{ return(('(not ' ~ sqls[0] ~ ')', 'boolean', 0, 0)) }}
    {%- elif op == 'is null' and args | length == 1 -%}
        {{ return(('(' ~ sqls[0] ~ ' is null)', 'boolean', 0, 0)) }}
    {%- elif op in ('=', '<>', '<', '<=', '>', '>=') and args | length == 2 and kinds | length == 1 -%}
        {%- do _qrepl_filter_widest(args, article, op) -%}
        {{ return(('(' ~ sqls[0] ~ ' ' ~ op ~ ' ' ~ sqls[1] ~ ')', 'boolean', 0, 0)) }}
    {%- elif op == 'in' and args | length >= 2 and kinds | length == 1 -%}
        {%- for arg in node['args'][1:] if 'lit' not in arg -%}
            {{ _qrepl_filter_refused(article, 'IN takes a list of literals') }}
        {%- endfor -%}
        {%- do _qrepl_filter_widest(args, article, 'IN') -%}
        {{ return(('(' ~ sqls[0] ~ ' in (' ~ sqls[1:] | join(', ') ~ '))', 'boolean', 0, 0)) }}
    {%- elif op == 'like' and args | length == 2 and kinds == ['string'] and 'lit' in node['args'][1] -%}
        {%- if modules.re.search('\\\\(?![%_])', node['args'][1]['lit'].replace('\\\\', '')) -%}
            {{ _qrepl_filter_refused(article, 'a LIKE pattern may escape only %, _ and \\') }}
        {%- endif -%}
        {{ return(('(' ~ sqls[0] ~ ' like ' ~ sqls[1] ~ ')', 'boolean', 0, 0)) }}
    {%- endif -%}
    {{ _qrepl_filter_refused(article, 'a part is not one a filter may use, or its sides are not of one type') }}
{% endmacro %}

{% macro _qrepl_filter_widest(args, article, what) %}
    {#- (integer digits, fraction digits) that hold every one of `args` (rendered nodes), refused
        when that is more than 38: Spark could not compare them exactly (filter_language._same). -#}
    {%- set whole = args | map(attribute=2) | max -%}
    {%- set frac = args | map(attribute=3) | max -%}
    {%- if whole + frac > 38 -%}
        {{ _qrepl_filter_refused(article, what ~ ' would need ' ~ (whole + frac) ~ ' digits to compare exactly (at most 38)') }}
    {%- endif -%}
    {{ return((whole, frac)) }}
{% endmacro %}
