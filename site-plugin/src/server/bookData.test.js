'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const {exampleTopics, pageLabels} = require('./bookData');

const doc = (id, title, permalink, frontMatter = {}) => ({id, title, permalink, frontMatter});

function content(versions) {
  return {'docusaurus-plugin-content-docs': {default: {loadedVersions: versions}}};
}

const current = {
  versionName: 'current',
  isLast: true,
  docs: [
    doc('intro', 'Introduction', '/book/docs/intro'),
    doc('gazebo/ros2', '1.4 Gazebo-ROS2 Integration', '/book/docs/gazebo/ros2', {sidebar_label: '2.4.1 Gazebo and ROS 2'}),
    doc('pid', 'PID Control', '/book/docs/pid'),
    doc('imu', 'Inertial Measurement Units', '/book/docs/imu'),
    doc('motors', 'Motors', '/book/docs/motors/'),
    doc('safety', 'Safety', '/book/docs/safety'),
    doc('unlisted', 'Not in a sidebar', '/book/docs/unlisted'),
  ],
  sidebars: {
    book: [
      {type: 'doc', id: 'intro'},
      {
        type: 'category',
        label: 'Simulation',
        link: {type: 'doc', id: 'gazebo/ros2'},
        items: [{type: 'doc', id: 'pid', label: '3.1 Controllers'}, {type: 'doc', id: 'imu'}],
      },
      {type: 'doc', id: 'motors'},
      {type: 'link', href: 'https://example.com', label: 'Elsewhere'},
      {type: 'doc', id: 'safety'},
    ],
  },
};

test('page labels: sidebar_label over the sidebar item label over the title; only where they differ', () => {
  assert.deepEqual(pageLabels(content([current])), {
    '/book/docs/gazebo/ros2': '2.4.1 Gazebo and ROS 2',
    '/book/docs/pid': '3.1 Controllers',
  });
  assert.deepEqual(pageLabels({}), {});
});

test('example topics: spread over the sidebar, without the first page, as the sidebar names them', () => {
  assert.deepEqual(exampleTopics(content([current])), ['2.4.1 Gazebo and ROS 2', '3.1 Controllers', 'Motors']);
  assert.deepEqual(exampleTopics(content([current]), 2), ['2.4.1 Gazebo and ROS 2', 'Inertial Measurement Units']);
});

test('example topics come from the last released version; a tiny or empty book gives what it has', () => {
  const old = {...current, isLast: false, docs: [doc('old', 'Old page', '/book/docs/1.0/old')], sidebars: {}};
  const tiny = {...current, docs: [doc('only', 'Only page', '/book/docs/only')], sidebars: {}};
  assert.deepEqual(exampleTopics(content([old, tiny])), ['Only page']);
  assert.deepEqual(exampleTopics(content([])), []);
  assert.deepEqual(exampleTopics({}), []);
});
