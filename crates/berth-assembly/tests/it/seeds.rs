//! The seed examples validate, resolve and plan; snapshots of plan text and diagnostics.

use std::collections::BTreeMap;

use expect_test::expect;

const H_BTA: &str = include_str!("../../../../examples/assemblies/h_bta.yaml");
const STREAMER: &str = include_str!("../../../../examples/assemblies/streamer_cluster.yaml");

fn req(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

fn show(diags: &[berth_assembly::Diagnostic]) -> String {
    diags
        .iter()
        .map(|d| format!("{}: {d}\n", d.severity))
        .collect()
}

#[test]
fn h_bta_plan() {
    assert_eq!(show(&berth_assembly::validate(H_BTA)), "");
    let plan = berth_assembly::plan_text(H_BTA, &req(&[])).unwrap();
    expect![[r#"
        assembly h_bta 1.0 (instance h_bta, id i0)
          Basic Test Assembly
        properties:
          data = data
          numOfServers = 1
          output = A_output
          deploymentLocation = admin@local
          resourceManager = test-rm
          scaleOut_threshold = 90
          scaleIn_threshold = 10
          scale_smoothing = 4
        prerequisites (must exist before instantiation):
          internal-network: resource::openstack_neutron_network::1.0
            deploymentLocation = admin@local
            resourceManager = test-rm
            name = VIDEO
          public-network: resource::openstack_neutron_network::1.0
            deploymentLocation = admin@local
            resourceManager = test-rm
            name = public
          xenial-image: resource::openstack_glance_image::1.0
            deploymentLocation = admin@local
            resourceManager = test-rm
            name = xenial
        components:
          A (resource::h_simple::1.0) quantity 1
            A-1 [i1]
              referenced-internal-network = ${internal-network.id} (pending)
              reference-public-network = ${public-network.id} (pending)
              image = ${xenial-image.id} (pending)
              key_name = ACCANTO_TEST_KEY
              data = data
              output = A_output
              deploymentLocation = admin@local
              resourceManager = test-rm
          B (resource::t_simple::1.0) cluster: initial 1, minimum 1, maximum 4, increment 1
            B-1 [i2]
              referenced-internal-network = ${internal-network.id} (pending)
              reference-public-network = ${public-network.id} (pending)
              image = ${xenial-image.id} (pending)
              key_name = ACCANTO_TEST_KEY
              data = data
              output = A_output
              deploymentLocation = admin@local
              resourceManager = test-rm
        relationships:
          third-relationship: A-1.capability-3 -> B-1.requirement-3 (source post Active, target pre Active)
            source = ${A-1.name} (pending)
            target = ${B-1.name} (pending)
            create: B-1.CreateRelationship3, A-1.CreateRelationship3
            cease: B-1.CeaseRelationship3, A-1.CeaseRelationship3
        lifecycle:
            1. install A-1
            2. start A-1  after 1
            3. install B-1
            4. create third-relationship (A-1 -> B-1)  after 2, 3
            5. start B-1  after 3, 4
        placement:
          A-1 (resource::h_simple::1.0): deploymentLocation=admin@local resourceManager=test-rm
          B-1 (resource::t_simple::1.0): deploymentLocation=admin@local resourceManager=test-rm
        policies:
          scaleStreamer: scale B on A.load (out above 90, in below 10, smoothing 4)
    "#]].assert_eq(&plan.render());
}

#[test]
fn streamer_plan() {
    expect![[r#"
        warning: relationships.uses-net_video.target-requirements[1] (148:9): unknown component `storage`; expected one of streamer, balancer, net_video, management-network, public-network; this endpoint is skipped
        warning: relationships.uses-management-network.target-requirements[1] (157:9): unknown component `storage`; expected one of streamer, balancer, net_video, management-network, public-network; this endpoint is skipped
    "#]].assert_eq(&show(&berth_assembly::validate(STREAMER)));
    let r = req(&[
        ("deploymentLocation", "tenant-a@dc1"),
        ("resourceManager", "rm-1"),
        ("tenant_key_name", "key-a"),
        ("management-network-name", "mgmt"),
        ("public-network-name", "pub"),
    ]);
    let plan = berth_assembly::plan_text(STREAMER, &r).unwrap();
    expect![[r#"
        assembly Streamer_cluster 1.0 (instance Streamer_cluster, id i0)
          An Assembly for a front end cluster comprising of a loadbalancer supported by an authorisation proxy and video streamers using a shared NFS based storage
        properties:
          deploymentLocation = tenant-a@dc1
          resourceManager = rm-1
          numOfStreamers = 2
          tenant_key_name = key-a
          management-network-name = mgmt
          public-network-name = pub
          max_connections = 3
          cluster_public_ip_address = ${balancer-1.publicIp} (pending)
          scaleout-threshold = 80
          scalein-threshold = 10
        prerequisites (must exist before instantiation):
          management-network: resource::urbancode-network::1.0
            deploymentLocation = tenant-a@dc1
            resourceManager = rm-1
            name = mgmt
          public-network: resource::urbancode-network::1.0
            deploymentLocation = tenant-a@dc1
            resourceManager = rm-1
            name = pub
        components:
          streamer (resource::c_streamer::1.0) cluster: initial 2, minimum 2, maximum 10, increment 2
            streamer-1 [i1]
              deploymentLocation = tenant-a@dc1
              resourceManager = rm-1
              key_name = key-a
              referenced-management-network = ${management-network.id} (pending)
              flavor = m1.small
              server_name = streamer-1
              referenced-video-network = ${net_video-1.network-id} (pending)
              availability_zone = DMZ
              integrity_publication_period = 120
              number-of-intervals = 4
            streamer-2 [i2]
              deploymentLocation = tenant-a@dc1
              resourceManager = rm-1
              key_name = key-a
              referenced-management-network = ${management-network.id} (pending)
              flavor = m1.small
              server_name = streamer-2
              referenced-video-network = ${net_video-1.network-id} (pending)
              availability_zone = DMZ
              integrity_publication_period = 120
              number-of-intervals = 4
          balancer (resource::c_balancer::1.0) quantity 1
            balancer-1 [i3]
              deploymentLocation = tenant-a@dc1
              resourceManager = rm-1
              key_name = key-a
              referenced-management-network = ${management-network.id} (pending)
              referenced-internal-network = ${net_video-1.network-id} (pending)
              referenced-public-network = ${public-network.id} (pending)
              flavor = m1.large
              server_name = balancer-1
              availability_zone = DMZ
              integrity_publication_period = 120
              number-of-intervals = 4
          net_video (resource::net_video::1.0) quantity 1
            net_video-1 [i4]
              deploymentLocation = tenant-a@dc1
              resourceManager = rm-1
              subnetCIDR = 10.0.1.0/24
              networkName = VIDEO
              subnetDefGwIp = 10.0.1.1
        relationships:
          uses-net_video: net_video-1.Network -> streamer-1.VideoNetwork (source post Active, target pre Inactive)
          uses-net_video: net_video-1.Network -> streamer-2.VideoNetwork (source post Active, target pre Inactive)
          uses-net_video: net_video-1.Network -> balancer-1.VideoNetwork (source post Active, target pre Inactive)
          uses-management-network: management-network -> streamer-1.ManagementNetwork (source post Active, target pre Inactive)
          uses-management-network: management-network -> streamer-2.ManagementNetwork (source post Active, target pre Inactive)
          uses-management-network: management-network -> balancer-1.ManagementNetwork (source post Active, target pre Inactive)
          balancer-uses-public-network: public-network -> balancer-1.PublicNetwork (source post Active, target pre Inactive)
          balanceStreamer: streamer-1.VideoStream -> balancer-1.HttpServer (source post Active, target pre Active)
            max_connections = 3
            server_ip = ${streamer-1.privateIp} (pending)
            server_port = 8080
            create: balancer-1.AddBalancedHttpServer
            cease: balancer-1.RemoveBalancedHttpServer
          balanceStreamer: streamer-2.VideoStream -> balancer-1.HttpServer (source post Active, target pre Active)
            max_connections = 3
            server_ip = ${streamer-2.privateIp} (pending)
            server_port = 8080
            create: balancer-1.AddBalancedHttpServer
            cease: balancer-1.RemoveBalancedHttpServer
        lifecycle:
            1. create uses-management-network (management-network -> streamer-1)
            2. create uses-management-network (management-network -> streamer-2)
            3. create uses-management-network (management-network -> balancer-1)
            4. create balancer-uses-public-network (public-network -> balancer-1)
            5. install net_video-1
            6. start net_video-1  after 5
            7. create uses-net_video (net_video-1 -> streamer-1)  after 6
            8. create uses-net_video (net_video-1 -> streamer-2)  after 6
            9. create uses-net_video (net_video-1 -> balancer-1)  after 6
           10. install streamer-1  after 1, 5, 7
           11. start streamer-1  after 10
           12. install streamer-2  after 2, 5, 8
           13. start streamer-2  after 12
           14. install balancer-1  after 3, 4, 5, 9
           15. create balanceStreamer (streamer-1 -> balancer-1)  after 11, 14
           16. create balanceStreamer (streamer-2 -> balancer-1)  after 13, 14
           17. start balancer-1  after 14, 15, 16
        placement:
          streamer-1 (resource::c_streamer::1.0): deploymentLocation=tenant-a@dc1 resourceManager=rm-1
          streamer-2 (resource::c_streamer::1.0): deploymentLocation=tenant-a@dc1 resourceManager=rm-1
          balancer-1 (resource::c_balancer::1.0): deploymentLocation=tenant-a@dc1 resourceManager=rm-1
          net_video-1 (resource::net_video::1.0): deploymentLocation=tenant-a@dc1 resourceManager=rm-1
        warnings:
          relationships.uses-net_video.target-requirements[1] (148:9): unknown component `storage`; expected one of streamer, balancer, net_video, management-network, public-network; this endpoint is skipped
          relationships.uses-management-network.target-requirements[1] (157:9): unknown component `storage`; expected one of streamer, balancer, net_video, management-network, public-network; this endpoint is skipped
    "#]].assert_eq(&plan.render());
}
