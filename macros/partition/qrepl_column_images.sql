{% macro qrepl_column_image_reads(column_lists, alias) %}
    {#- For each article some subscription of the batch takes only some columns of (docs/spec.md
        §11): its commands' new image (typed_row) and the row at the cut (root_row) read back by
        the article's types, `qrepl_new__<article>` and `qrepl_cut__<article>` (row images are
        Spark's own JSON, which these types and qrepl_json_options read back exactly); NULL for
        another article's commands. Each column is preceded by a comma, to follow a select list. -#}
    {%- set out = [] -%}
    {%- for article in qrepl_filter_articles(column_lists) -%}
        {%- set ddl = _qrepl_columns_ddl(article, none) -%}
        {%- for image, name in [('typed_row', 'new'), ('root_row', 'cut')] -%}
            {%- do out.append(
                ", case when " ~ alias ~ ".article = '" ~ article.name ~ "' then from_json(" ~ alias ~ "." ~ image
                ~ ", '" ~ ddl ~ "', " ~ qrepl_json_options() ~ ") end as qrepl_" ~ name ~ "__" ~ article.name
            ) -%}
        {%- endfor -%}
    {%- endfor -%}
    {{ return(out | join('\n')) }}
{% endmacro %}


{% macro qrepl_merged_image(column_lists, coupled) %}
    {#- The row an update from a subscription that takes some of the article's columns leaves
        (reference.ReferenceReader.image): its columns from the command, each other column as the
        row it meets holds it. That value is the one the last command before it on the row set:
        a command sets every column, but an update from such a subscription only its own; the
        commands before it are the transaction's own earlier ones on the row, then (in a coupled
        batch) the applied transactions' before it, then the row at the cut. Decisions are made
        on versions, so this needs no recursion: one window per column over the transaction's
        commands on the row and, when coupled, one over the row. Every other command leaves its
        own typed_row. Reads the columns of qrepl_column_image_reads. -#}
    case
    {%- for entry in column_lists %}
        {%- set a = entry.article.name %}
        when subscriber = '{{ entry.subscriber }}' and article = '{{ a }}' and op = 'U' then
            to_json(named_struct(
            {%- for name, type in entry.article['columns'] %}
                '{{ name }}',
                {%- if name in entry.columns %}
                    qrepl_new__{{ a }}.`{{ name }}`,
                {%- else %}
                    coalesce(
                        last({{ _qrepl_sets(column_lists, entry.article, name) }}, true) over (
                            partition by tran_pos, article, row_key order by command_seq
                            rows between unbounded preceding and 1 preceding
                        ),
                        {%- if coupled %}
                        last(case when is_applied then {{ _qrepl_sets(column_lists, entry.article, name) }} end, true) over (
                            partition by {{ qrepl_row_partition() }} order by tran_pos, command_seq
                            rows between unbounded preceding and 1 preceding
                        ),
                        {%- endif %}
                        case when root_exists then named_struct('v', qrepl_cut__{{ a }}.`{{ name }}`) end
                    ).v,
                {%- endif %}
            {%- endfor %}
                'msrepl_tran_version', new_version
            ), {{ qrepl_json_options(keep_nulls=true) }})
    {%- endfor %}
        else typed_row
    end
{% endmacro %}


{% macro _qrepl_sets(column_lists, article, name) -%}
    {#- On a command of `article`: named_struct('v', value) when the command sets column `name`
        (its value; NULL for a delete), else NULL. Every command sets it but an update from a
        subscription whose list leaves it out. -#}
    {%- set leave_out = [] -%}
    {%- for entry in column_lists if entry.article.name == article.name and name not in entry.columns -%}
        {%- do leave_out.append("'" ~ entry.subscriber ~ "'") -%}
    {%- endfor -%}
    case
        when article = '{{ article.name }}'
            {%- if leave_out %} and not (op = 'U' and subscriber in ({{ leave_out | join(', ') }})){% endif %}
            then named_struct('v', case when op <> 'D' then qrepl_new__{{ article.name }}.`{{ name }}` end)
    end
{%- endmacro %}


{% macro qrepl_image_taken(column_lists, image) %}
    {#- `image` (a row image of the command's article) as the command's subscription holds it:
        its columns and msrepl_tran_version (partitions.project). NULL when no subscription of
        the batch takes some columns only: the image is then the whole row. -#}
    {%- if not column_lists -%}
        cast(null as string)
    {%- else -%}
        case
        {%- for entry in column_lists %}
            when subscriber = '{{ entry.subscriber }}' and article = '{{ entry.article.name }}' then
                to_json(from_json({{ image }}, '{{ _qrepl_columns_ddl(entry.article, entry.columns) }}, `msrepl_tran_version` STRING', {{ qrepl_json_options() }}), {{ qrepl_json_options(keep_nulls=true) }})
        {%- endfor %}
        end
    {%- endif -%}
{% endmacro %}
