import test from 'node:test';
import assert from 'node:assert/strict';
import {citationLabel, citationTarget, hashToId, topicLabel} from './citations.mjs';

const site = {baseUrl: '/textbook-chat-sample/', siteUrl: 'https://example.github.io', origin: 'http://127.0.0.1:3000'};

test('site-absolute citation URLs (with baseUrl) are router targets', () => {
  assert.deepEqual(citationTarget('/textbook-chat-sample/docs/intro#goals', site), {
    internal: true,
    pathname: '/textbook-chat-sample/docs/intro',
    hash: '#goals',
    to: '/textbook-chat-sample/docs/intro#goals',
  });
});

test('routes without the baseUrl get it added', () => {
  assert.equal(citationTarget('/docs/intro#goals', site).to, '/textbook-chat-sample/docs/intro#goals');
  assert.equal(citationTarget('docs/intro', site).to, '/textbook-chat-sample/docs/intro');
  assert.equal(citationTarget('/docs/intro', {baseUrl: '/'}).to, '/docs/intro');
});

test('absolute URLs on this site or its production URL stay in the SPA', () => {
  assert.equal(citationTarget('http://127.0.0.1:3000/textbook-chat-sample/docs/a#b', site).to, '/textbook-chat-sample/docs/a#b');
  assert.equal(citationTarget('https://example.github.io/textbook-chat-sample/docs/a', site).internal, true);
});

test('other sites are external; unsafe URLs are dropped', () => {
  assert.deepEqual(citationTarget('https://ros.org/doc', site), {internal: false, href: 'https://ros.org/doc'});
  assert.equal(citationTarget('javascript:alert(1)', site), null);
  assert.equal(citationTarget('//evil.example/x', site), null);
  assert.equal(citationTarget('', site), null);
  assert.equal(citationTarget(undefined, site), null);
});

test('a bare fragment stays on the current page', () => {
  assert.deepEqual(citationTarget('#goals', site), {internal: true, pathname: '', hash: '#goals', to: '#goals'});
});

test('hash ids are decoded (Docusaurus keeps non-ASCII letters)', () => {
  assert.equal(hashToId('#caf%C3%A9-r%C3%A9sum%C3%A9'), 'café-résumé');
  assert.equal(hashToId('#100%'), '100%');
  assert.equal(hashToId(''), '');
  assert.equal(hashToId('#'), '');
});

test('source labels name the section and the page once', () => {
  assert.equal(citationLabel({title: 'PID control', section_title: 'Tuning'}), 'Tuning — PID control');
  assert.equal(citationLabel({title: 'PID control', section_title: 'PID control'}), 'PID control');
  assert.equal(citationLabel({url: '/x'}), '/x');
});

test('citation labels name the page as the sidebar does', () => {
  const pageLabels = {'/book/docs/gazebo/ros2': '2.4.1 Gazebo and ROS 2'};
  const cited = {title: '1.4 Gazebo-ROS2 Integration', section_title: 'Bridging topics', url: '/book/docs/gazebo/ros2/#bridging-topics'};
  assert.equal(citationLabel(cited, pageLabels), 'Bridging topics — 2.4.1 Gazebo and ROS 2');
  const intro = {...cited, section_title: '1.4 Gazebo-ROS2 Integration', url: 'https://site.example/book/docs/gazebo/ros2'};
  assert.equal(citationLabel(intro, pageLabels), '2.4.1 Gazebo and ROS 2');
  assert.equal(citationLabel({...cited, url: '/book/docs/other#x'}, pageLabels), 'Bridging topics — 1.4 Gazebo-ROS2 Integration');
});

test('related topics and found sources name the page as the sidebar does', () => {
  const pageLabels = {'/book/docs/pid': '4. Feedback with PID'};
  assert.equal(topicLabel({title: 'PID Control › Tuning', url: '/book/docs/pid#tuning'}, pageLabels), '4. Feedback with PID › Tuning');
  assert.equal(topicLabel({title: 'PID Control', url: '/book/docs/pid/'}, pageLabels), '4. Feedback with PID');
  assert.equal(topicLabel({title: 'Motors › Servos', url: '/book/docs/motors#servos'}, pageLabels), 'Motors › Servos');
  assert.equal(topicLabel({url: '/x'}), '/x');
});
