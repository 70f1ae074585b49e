with

qrepl_publication as (

    select * from {{ source('qrepl', 'qrepl_publication') }}

),

articles as (

    select * from {{ source('qrepl', 'qrepl_articles') }}

),

joined as (

    select
        qrepl_publication.publication,
        qrepl_publication.policy,
        qrepl_publication.conflict_retention_days,
        qrepl_publication.centralized_conflicts,
        articles.article,
        articles.ordinal,
        articles.key_columns,
        articles.column_names,
        articles.column_types
    from qrepl_publication
    cross join articles

)

select * from joined
