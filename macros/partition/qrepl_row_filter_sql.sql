{% macro qrepl_row_filter_sql(tree, article, prefix) %}
    {#- Spark SQL of a stored row filter over the columns `<prefix>.<column>` (docs/spec.md
        §11). Rendered from the tree, never from a user's text, as
        python/qrepl/core/filter_meaning.py (spark_sql) renders it, and each part checked again
        as python/qrepl/core/filter_language.py checks it: a column of the article of an exact
        type, an operator or function of the language, a literal of its type whose text is
        what it says (a string reaches the SQL as its UTF-8 bytes in hex), one type on both
        sides of a comparison. Anything else stops the run with one line: a partition_spec
        edited in the table is never run as SQL. -#}
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
    {#- (SQL, type) of one checked node: type number, string, boolean or date. -#}
    {%- if node is not mapping -%}
        {{ _qrepl_filter_refused(article, 'not a filter tree') }}
    {%- endif -%}
    {%- if 'col' in node -%}
        {%- set col = node['col'] -%}
        {%- if col is not string or col not in types -%}
            {{ _qrepl_filter_refused(article, 'a column it names is not a column of the article') }}
        {%- endif -%}
        {%- set type = types[col] -%}
        {%- if type in ('tinyint', 'smallint', 'int', 'bigint') or type.startswith('decimal(') -%}
            {{ return((prefix ~ '.`' ~ col ~ '`', 'number')) }}
        {%- elif type in ('string', 'boolean', 'date') -%}
            {{ return((prefix ~ '.`' ~ col ~ '`', type)) }}
        {%- endif -%}
        {{ _qrepl_filter_refused(article, 'column ' ~ col ~ ' is a ' ~ type ~ ', not an exact type') }}
    {%- elif 'lit' in node -%}
        {%- set t = node.get('type') -%}
        {%- set v = node['lit'] -%}
        {%- if t == 'string' and v is string -%}
            {{ return(("cast(X'" ~ (v.encode('utf-8').hex() | upper) ~ "' as string)" if v else "''", 'string')) }}
        {%- elif t == 'boolean' and v in ('true', 'false') -%}
            {{ return((v, 'boolean')) }}
        {%- elif t == 'date' and v is string and modules.re.fullmatch('(?!0000)[0-9]{4}-[0-9]{2}-[0-9]{2}', v) -%}
            {{ return(("DATE '" ~ v ~ "'", 'date')) }}
        {%- elif t == 'number' and v is string and modules.re.fullmatch('-?[0-9]{1,38}(\\.[0-9]{1,38})?', v) -%}
            {%- if '.' in v -%}
                {{ return((v ~ 'BD', 'number')) }}
            {%- endif -%}
            {%- set n = v | int -%}
            {%- if -2147483648 <= n and n <= 2147483647 -%}
                {{ return((n | string, 'number')) }}
            {%- elif -9223372036854775808 <= n and n <= 9223372036854775807 -%}
                {{ return((n | string ~ 'L', 'number')) }}
            {%- endif -%}
            {{ return((v ~ 'BD', 'number')) }}
        {%- endif -%}
        {{ _qrepl_filter_refused(article, 'a literal is not of the type it says') }}
    {%- elif 'fn' in node -%}
        {%- set args = [] -%}
        {%- for arg in node.get('args') or [] -%}{%- do args.append(_qrepl_filter_node(arg, article, types, prefix)) -%}{%- endfor -%}
        {%- set sqls = [] -%}{%- set kinds = [] -%}
        {%- for arg in args -%}{%- do sqls.append(arg[0]) -%}{%- if arg[1] not in kinds -%}{%- do kinds.append(arg[1]) -%}{%- endif -%}{%- endfor -%}
        {%- if node['fn'] == 'coalesce' and kinds | length == 1 -%}
            {{ return(('coalesce(' ~ sqls | join(', ') ~ ')', kinds[0])) }}
        {%- elif node['fn'] in ('lower', 'upper', 'trim', 'length') and args | length == 1 and kinds == ['string'] -%}
            {{ return((node['fn'] ~ '(' ~ sqls[0] ~ ')', 'number' if node['fn'] == 'length' else 'string')) }}
        {%- endif -%}
        {{ _qrepl_filter_refused(article, 'a function is not one a filter may use, or its arguments are not of its types') }}
    {%- endif -%}
    {%- set op = node.get('op') -%}
    {%- set args = [] -%}
    {%- for arg in node.get('args') or [] -%}{%- do args.append(_qrepl_filter_node(arg, article, types, prefix)) -%}{%- endfor -%}
    {%- set sqls = [] -%}{%- set kinds = [] -%}
    {%- for arg in args -%}{%- do sqls.append(arg[0]) -%}{%- if arg[1] not in kinds -%}{%- do kinds.append(arg[1]) -%}{%- endif -%}{%- endfor -%}
    {%- if op in ('and', 'or') and args | length >= 1 and kinds == ['boolean'] -%}
        {{ return(('(' ~ sqls | join(' ' ~ op ~ ' ') ~ ')', 'boolean')) }}
    {%- elif op == 'not' and args | length == 1 and kinds == ['boolean'] -%}
        {{ return(('(not ' ~ sqls[0] ~ ')', 'boolean')) }}
    {%- elif op == 'is null' and args | length == 1 -%}
        {{ return(('(' ~ sqls[0] ~ ' is null)', 'boolean')) }}
    {%- elif op in ('=', '<>', '<', '<=', '>', '>=') and args | length == 2 and kinds | length == 1 -%}
        {{ return(('(' ~ sqls[0] ~ ' ' ~ op ~ ' ' ~ sqls[1] ~ ')', 'boolean')) }}
    {%- elif op == 'in' and args | length >= 2 and kinds | length == 1 -%}
        {%- for arg in node['args'][1:] if 'lit' not in arg -%}
            {{ _qrepl_filter_refused(article, 'IN takes a list of literals') }}
        {%- endfor -%}
        {{ return(('(' ~ sqls[0] ~ ' in (' ~ sqls[1:] | join(', ') ~ '))', 'boolean')) }}
    {%- elif op == 'like' and args | length == 2 and kinds == ['string'] and 'lit' in node['args'][1] -%}
        {%- if modules.re.search('\\\\(?![%_])', node['args'][1]['lit'].replace('\\\\', '')) -%}
            {{ _qrepl_filter_refused(article, 'a LIKE pattern may escape only %, _ and \\') }}
        {%- endif -%}
        {{ return(('(' ~ sqls[0] ~ ' like ' ~ sqls[1] ~ ')', 'boolean')) }}
    {%- endif -%}
    {{ _qrepl_filter_refused(article, 'a part is not one a filter may use, or its sides are not of one type') }}
{% endmacro %}
