{% macro publisher_rows_sql(config, touched, as_stamped=false) %}
    /* One row per publisher row of every article whose canonical key is among `touched`
       (a relation or CTE with article, row_key): its key, row image and version. With
       `as_stamped` (the batch cut), each table is read as of the snapshot this run's
       publisher trigger examined (macro qrepl_publisher_as_stamped), so every row the batch
       is resolved against has been through the trigger. The join
       runs on the typed key columns (from_json of the key), so only the rows found are
       serialized; comparing their canonical key text with row_key keeps it exact. That
       comparison is wrapped in coalesce so Spark keeps it a filter after the join: as a
       plain equality it becomes a join key, and every publisher row is serialized and
       shuffled by its key text. */
    {%- for article in config['articles'] %}
    select
        '{{ article.name }}' as article,
        touched_keys.row_key,
        {{ row_json_expr(article, 'publisher.', 'publisher.msrepl_tran_version') }} as row_json,
        publisher.msrepl_tran_version
    from {{ qrepl_publisher_as_stamped(article) if as_stamped else qrepl_article_relation(article) }} as publisher
    inner join (
        select
            row_key,
            {{ typed_key_expr(article, 'row_key') }} as typed
        from {{ touched }}
        where article = '{{ article.name }}'
    ) as touched_keys
        on
            {%- for k in article.key %}
            publisher.{{ k }} = touched_keys.typed.{{ k }}{{ ' and' if not loop.last }}
            {%- endfor %}
    where coalesce(to_json(named_struct(
        {%- for k in article.key %}'{{ k }}', publisher.{{ k }}{{ ', ' if not loop.last }}{% endfor -%}
    ), {{ qrepl_json_options() }}) = touched_keys.row_key, false)
    {% if not loop.last %}union all{% endif %}
    {%- else %}
    select
        cast(null as string) as article,
        cast(null as string) as row_key,
        cast(null as string) as row_json,
        cast(null as string) as msrepl_tran_version
    where false
    {%- endfor %}
{% endmacro %}
